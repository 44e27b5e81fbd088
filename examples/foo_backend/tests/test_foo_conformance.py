"""tensorplug's conformance kit on the Foo backend: every op against its numpy oracle, and
the gradients against the CPU's. Foo computes with the CPU's numpy kernels, which tensorplug's
own tests run in every dtype, so this suite keeps two."""

from tensorplug.testing import instantiate_device_type_tests

instantiate_device_type_tests(globals(), "foo", dtypes=("float32", "int64"))
