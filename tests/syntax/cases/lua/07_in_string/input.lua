local s = "hello █"
