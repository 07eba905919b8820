"""The ASGI middlewares around the API, outermost first as ``homing.api.app`` adds them:
``request_id``, ``host_guard``, ``admin_guard``, ``sending_gate`` (admission),
``direct_email`` (a valid single email accepted without FastAPI), ``body_limit``.
"""
