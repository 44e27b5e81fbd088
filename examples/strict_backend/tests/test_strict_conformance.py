"""tensorplug's conformance kit on the Strict backend: every op against its numpy oracle, and
the gradients against the CPU's."""

from tensorplug.testing import instantiate_device_type_tests

instantiate_device_type_tests(globals(), "strict")
