"""One id -> live object map for the engine and every adapter."""

from __future__ import annotations

from toolret.index.live_tools import LiveTools


def test_objects_resolve_by_id_and_by_name_and_are_forgotten_together():
    live = LiveTools()
    first, second = object(), object()
    live.update({"srv__get_weather": first, "send_email": second}, names={"srv__get_weather": "get_weather"})
    assert live.get("srv__get_weather") is first and live.by_name("get_weather") is first
    assert live.by_name("send_email") is second and live.by_name("srv__get_weather") is first
    live.keep({"send_email"})
    assert live.get("srv__get_weather") is None and live.by_name("get_weather") is None
    assert list(live) == ["send_email"] and len(live) == 1
    assert live.pop("send_email") is second and len(live) == 0


def test_the_knowledge_base_shares_its_map(embedder):
    from toolret import ToolKnowledgeBase

    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return city

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([get_weather])
    assert kb.live_tools.by_name("get_weather") is get_weather is kb.tool("get_weather")
    kb.close()
