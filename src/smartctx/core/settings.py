"""Everything a user can configure, in one object (env prefix ``SMARTCTX_``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

CommaList = Annotated[list[str], NoDecode]
"""A list setting written as comma-separated text in the environment (``a.example,b.example``)."""


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
    focus_keep_turns: int | None = Field(
        1,
        ge=0,
        description="exchanges a thread keeps verbatim when a new turn begins (earlier ones, "
        "and earlier turns' knowledge and tool logs, are archived and recalled when relevant); "
        "unset keeps the whole window",
    )
    focus_recall_share: float = Field(
        0.1, ge=0.0, le=1.0, description="share of the budget recalled archive may use per turn"
    )
    embedder: Literal["use", "e5", "hashing"] = "use"
    retrieval_embedder: Literal["use", "e5", "hashing"] = Field(
        "use",
        description="embedder of the knowledge base and the memories API: use embeds a query in "
        "about 3 ms and shares the turn's vectors; e5 takes 20-45 ms a query",
    )
    recall_embedder: Literal["use", "e5", "hashing"] | None = Field(
        None,
        description="embedder of a served window's recall index (its archived slots); unset: "
        "the similarity embedder (use: about 2 ms a turn, sharing the window's deduplication "
        "vectors; e5 takes 20-90 ms a turn for a few points of LoCoMo recall)",
    )
    embed_threads: int = Field(
        1, ge=1, description="BLAS/OpenMP threads of one embedder call (turns embed a few texts)"
    )
    embed_process: bool = Field(
        True,
        description="run the use/e5 model in a helper process, so a turn's embedding runs on "
        "another core instead of holding the server's interpreter (off: in the server process)",
    )
    embed_workers: int = Field(
        0,
        ge=0,
        description="threads that embed a turn's texts ahead; 0 embeds on the loop (cached)",
    )

    # storage
    data_dir: Path = Path(".smartctx")
    database_url: str | None = Field(
        None, description="SQLAlchemy async URL; default sqlite+aiosqlite:///<data_dir>/smartctx.db"
    )
    db_pool_size: int = Field(
        32,
        gt=0,
        description="PostgreSQL connections a process keeps open (8 more at peak); a running "
        "turn uses up to four at once, and a connection opened per turn costs PostgreSQL a fork",
    )

    # service
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    system_prompt: str = (
        "You are the smartctx helpdesk assistant. Answer from the knowledge in your context and "
        "cite its source; say plainly when you do not have the information."
    )
    public_url: str | None = Field(
        None,
        description="base URL the agent card advertises (behind a proxy or when bound to 0.0.0.0)",
    )
    max_message_chars: int = Field(32_000, gt=0)
    max_body_bytes: int = Field(1_048_576, gt=0, description="largest request body accepted")
    max_json_depth: int = Field(32, gt=0, description="deepest JSON nesting of a request body")
    max_live_contexts: int = Field(
        1000, gt=0, description="context windows held in memory; least recently used leave"
    )
    max_running_turns: int | None = Field(
        None,
        gt=0,
        description=(
            "A2A turns run at once; more wait (default: 3 with the offline responder, whose turns"
            " are CPU work on one event loop; 16 with a chat model, whose turns mostly wait for it)"
        ),
    )
    max_waiting_turns: int = Field(
        256, ge=0, description="turns waiting to run; beyond, a retryable 'server busy' error"
    )
    context_idle_timeout: float = Field(
        900.0, gt=0, description="seconds before an idle context leaves memory"
    )
    cleanup_interval: float = Field(60.0, gt=0)
    kb_top_k: int = Field(2, ge=0)

    # operations
    log_format: Literal["text", "json"] = Field("text", description="log lines as text or JSON")
    trace_exporter: Literal["none", "console"] = Field(
        "none", description="'console' prints a span per turn (needs smartctx[tracing])"
    )

    # chat model (OpenAI-compatible); empty base URL means the offline GroundedResponder
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_timeout: float = 60.0
    memory_llm: bool = Field(
        True,
        description="with an LLM configured, also use it to extract and consolidate facts and to "
        "rewrite the summaries the funnel writes",
    )

    # personal memory
    retention_days_pairs: int = Field(30, ge=0)
    retention_days_sessions: int = Field(90, ge=0)
    retention_days_daily: int = Field(180, ge=0)
    retention_days_weekly: int = Field(365, ge=0)
    compaction_interval: float = Field(3600.0, gt=0)
    secret_copies: Literal["none", "encrypted"] = Field(
        "none", description="keep an encrypted copy of a pair whose secrets were redacted"
    )
    secrets_key: SecretStr | None = Field(None, description="Fernet key for secret_copies")

    # identity and access (docs/security.md); auth None = on unless the server binds to loopback
    auth: bool | None = Field(None, description="require credentials (default: off on loopback)")
    jwt_secret: str | None = Field(None, description="shared secret of HS256 bearer JWTs")
    jwks_url: str | None = Field(None, description="JWKS URL of the identity provider")
    jwt_algorithms: CommaList = Field(
        default_factory=list, description="accepted JWT algorithms (default HS256 or RS256,ES256)"
    )
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    jwt_owner_claim: str = Field("sub", description="JWT claim that names the owner")
    jwt_admin_claim: str | None = Field(
        None, description="JWT claim that marks an admin: true, 'admin' or a list holding 'admin'"
    )
    allowed_hosts: CommaList = Field(
        default_factory=list, description="Host names served besides loopback and the public URL"
    )
    allowed_origins: CommaList = Field(
        default_factory=list, description="browser origins allowed besides the server's own"
    )
    rate_limit_per_minute: int = Field(600, ge=0, description="requests per key a minute; 0 = off")
    max_streams_per_key: int = Field(8, ge=0, description="open SSE streams per key; 0 = off")

    @field_validator("jwt_algorithms", "allowed_hosts", "allowed_origins", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("data_dir")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @property
    def memory_model_on(self) -> bool:
        """Whether the memory pipeline uses the configured chat model (facts, summaries)."""
        return bool(self.llm_base_url) and self.memory_llm

    def resolved_database_url(self) -> str:
        """The database URL to use: the explicit one, else SQLite under ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'smartctx.db').resolve()}"
