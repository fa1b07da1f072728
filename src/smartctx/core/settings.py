"""Everything a user can configure, in one object (env prefix ``SMARTCTX_``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """smartctx settings. Every field can be set as ``SMARTCTX_<NAME>`` in the environment.

    Example: ``SMARTCTX_BUDGET=8000 SMARTCTX_DATABASE_URL=postgresql+asyncpg://... smartctx serve``.
    """

    model_config = SettingsConfigDict(env_prefix="SMARTCTX_", extra="ignore")

    # window
    budget: int = Field(4096, gt=0, description="token budget of a context window")
    token_encoding: Literal["cl100k_base", "o200k_base"] = "cl100k_base"
    dedup_threshold: float = Field(0.92, gt=0.0, le=1.0)
    drop_below: float = Field(3.0, description="DropBelow stage threshold priority")
    keep_recent: int = Field(4, ge=0, description="turns the Summarize stage never touches")
    recall_ratio: float = Field(0.3, ge=0.0, le=1.0)
    embedder: Literal["use", "e5", "hashing"] = "use"
    retrieval_embedder: Literal["use", "e5", "hashing"] = "e5"

    # storage
    data_dir: Path = Path(".smartctx")
    database_url: str | None = Field(
        None, description="SQLAlchemy async URL; default sqlite+aiosqlite:///<data_dir>/smartctx.db"
    )

    # service
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    system_prompt: str = (
        "You are the smartctx helpdesk assistant. Answer from the knowledge in your context and "
        "cite its source; say plainly when you do not have the information."
    )
    max_message_chars: int = Field(32_000, gt=0)
    context_idle_timeout: float = Field(
        900.0, gt=0, description="seconds before an idle context leaves memory"
    )
    cleanup_interval: float = Field(60.0, gt=0)
    kb_top_k: int = Field(2, ge=0)

    # chat model (OpenAI-compatible); empty base URL means the offline GroundedResponder
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_timeout: float = 60.0
    memory_llm: bool = Field(
        True, description="with an LLM configured, also use it to extract and consolidate facts"
    )

    # personal memory
    retention_days_pairs: int = Field(30, ge=0)
    retention_days_sessions: int = Field(90, ge=0)
    retention_days_daily: int = Field(180, ge=0)
    retention_days_weekly: int = Field(365, ge=0)
    compaction_interval: float = Field(3600.0, gt=0)

    @field_validator("data_dir")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    def resolved_database_url(self) -> str:
        """The database URL to use: the explicit one, else SQLite under ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'smartctx.db').resolve()}"
