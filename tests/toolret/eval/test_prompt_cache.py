"""The prompt-cache cost model: a call re-processes what follows the prefix it shares with the previous call."""

from __future__ import annotations

from toolret.eval.prompt_cache import call_costs, prompt_blocks


def _words(text: str) -> int:
    return len(text.split())


def test_an_appended_tool_keeps_the_old_tools_cached_but_re_processes_the_conversation_after_it():
    history = ["system prompt here", "user: weather in Oslo", "ai: rain"]
    first = prompt_blocks(["get weather"], history[:2])
    appended = prompt_blocks(["get weather", "convert currency"], [*history, "user: 20 EUR in USD"])
    same = prompt_blocks(["get weather", "convert currency"], [*history, "user: 20 EUR in USD", "ai: 21", "user: ok"])
    costs = call_costs([first, appended, same], _words, tools=[1, 2, 2])
    assert [c.reprocessed for c in costs] == [9, 2 + 3 + 4 + 2 + 5, 2 + 2]
    assert [c.tools_prefix_kept for c in costs] == [False, True, True]
    assert costs[1].cached == 2 and costs[1].billed(0.1) == 16 + 0.2


def test_a_reordered_list_re_processes_everything_from_the_first_changed_tool():
    a = prompt_blocks(["t1", "t2"], ["sys", "user: hi"])
    b = prompt_blocks(["t2", "t1"], ["sys", "user: hi", "ai: yo", "user: again"])
    cost = call_costs([a, b], _words, tools=[2, 2])[1]
    assert cost.reprocessed == cost.prompt_tokens and not cost.tools_prefix_kept
    assert cost.definition_tokens == 2
