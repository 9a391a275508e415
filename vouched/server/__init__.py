"""The HTTP service: SSE answers, an OpenAI-compatible face, metrics and the chat page.

    from vouched.server import create_app
    app = create_app(load_config("vouched.toml"))   # serve with uvicorn, or `vouched serve`
"""

from vouched.server.app import create_app

__all__ = ["create_app"]
