"""The base of every settings group: a typed model whose fields name their environment variable."""

from pydantic import BaseModel, ConfigDict


class SettingsGroup(BaseModel):
    """Each field's `validation_alias` is its environment variable (e.g. `LLM_BASE_URL`); the field name
    is accepted too, so a group can be built in code (`LlmSettings(base_url=None)`)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, extra="forbid")

    @classmethod
    def env_names(cls) -> dict[str, str]:
        """Field name by environment variable name."""
        return {str(field.validation_alias): name for name, field in cls.model_fields.items()}
