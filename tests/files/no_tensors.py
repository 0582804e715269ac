total = sum(range(10))
print("total", total)
