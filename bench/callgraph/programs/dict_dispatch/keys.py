DELETE = "delete"
