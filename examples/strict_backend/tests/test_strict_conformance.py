"""tensorplug's conformance kit on the Strict backend: every op against its numpy oracle, and
the gradients against the CPU's."""

from tensorplug.testing import instantiate_device_type_tests

instantiate_device_type_tests(
    globals(),
    "strict",
    expected_failures={
        # the standard has no strided views: without numpy's diagonal, the kit's is a copy,
        # so writing through it does not reach the base (values and shapes do match)
        "diagonal": "a copy, not a view, on a namespace without diagonal()",
    },
)
