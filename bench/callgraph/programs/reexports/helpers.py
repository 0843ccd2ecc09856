def tidy():
    pass


def register():
    pass


register()  # module-level code: runs when the module is first imported
