print("qtrace")
