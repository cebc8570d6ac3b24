"""``ray._raylet``: the public names of Ray's core module that programs import from there.

Ray re-exports them as ``ray.ObjectRef``, ``ray.ObjectRefGenerator`` and
``ray.DynamicObjectRefGenerator``, but its documentation's type hints import
them from ``ray._raylet`` (``from ray._raylet import ObjectRefGenerator``),
and ``StreamingObjectRefGenerator`` is the older name of the generator. They
are the controlled classes, so ``isinstance`` checks hold. Any other name of
the module (ids, the GCS client) is refused as not under control.
"""

from __future__ import annotations

from dnsse.engine.uncontrolled import refusing_getattr
from dnsse.frameworks.ray.refs import ObjectRef
from dnsse.frameworks.ray.streaming import DynamicObjectRefGenerator, ObjectRefGenerator

# Ray's own alias, kept for programs written against Ray 2.7 to 2.9.
StreamingObjectRefGenerator = ObjectRefGenerator

__all__ = ["ObjectRef", "ObjectRefGenerator", "DynamicObjectRefGenerator", "StreamingObjectRefGenerator"]

__getattr__ = refusing_getattr("ray._raylet", lambda: ", ".join(f"ray._raylet.{name}" for name in __all__))
