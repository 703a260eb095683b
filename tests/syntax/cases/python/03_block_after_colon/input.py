def add(a, b):█
