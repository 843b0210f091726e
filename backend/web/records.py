"""Response models derived from the store's records (core/store's frozen dataclasses), so a record's
fields are declared once: `class ChunkOut(record_fields(Chunk))` has Chunk's fields, in its order, and
validates from a record's attributes (`ChunkOut.model_validate(chunk)`).

The subclass narrows what the API promises (a Literal for a status, a description, a default) by
declaring the field again, which pydantic keeps in the record's position."""

from collections.abc import Collection
from dataclasses import fields, is_dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model


def record_fields(record: type[Any], *, exclude: Collection[str] = (), **types: Any) -> type[BaseModel]:
    """A base model with `record`'s fields but `exclude` (columns the API does not show). `types`
    replaces a field's type where the record's own does not validate as the API's: a nested record
    (its response model instead) or a TypedDict (pydantic on Python 3.11 needs typing_extensions')."""
    if not is_dataclass(record):
        raise TypeError(f"{record!r} is not a dataclass record")
    hints = get_type_hints(record)
    names = [field.name for field in fields(record) if field.name not in exclude]
    unknown = (set(exclude) | types.keys()) - {field.name for field in fields(record)}
    if unknown:
        raise TypeError(f"{record.__name__} has no fields {sorted(unknown)}")
    definitions: dict[str, Any] = {name: (types.get(name, hints[name]), ...) for name in names}
    return create_model(
        f"{record.__name__}Fields",
        __config__=ConfigDict(from_attributes=True),
        __module__=__name__,
        **definitions,
    )
