print("qtrace-samples")
