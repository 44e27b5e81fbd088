from tensorplug.testing import instantiate_device_type_tests

instantiate_device_type_tests(globals(), "dask", dtypes=("float32", "int64", "bool"))
