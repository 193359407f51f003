"""virtual_home: household action plans, scored as the original and in a symbolic world."""
