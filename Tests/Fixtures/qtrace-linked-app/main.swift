import QTrace
