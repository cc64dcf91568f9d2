"""The one small LLM protocol every LLM step goes through, the OpenAI-compatible client, the
versioned prompts and the test doubles.

Every name below is importable from this package (``from toolret.llm import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "CARD_V1": "prompts",
    "ChatMessage": "protocol",
    "EXPAND_V1": "prompts",
    "FAULTS": "testing",
    "Fault": "testing",
    "FaultInjectingLLM": "testing",
    "JUDGE_V1": "prompts",
    "LLM": "protocol",
    "LLMError": "protocol",
    "LLMSteps": "steps",
    "MalformedOutputError": "protocol",
    "OpenAICompatibleLLM": "openai_client",
    "PLANNER_V1": "prompts",
    "PromptTemplate": "prompts",
    "REFLECT_V1": "prompts",
    "RERANK_POINTWISE_V1": "prompts",
    "RERANK_V1": "prompts",
    "STEP_SCHEMAS": "testing",
    "ScriptedLLM": "testing",
    "astructured_call": "protocol",
    "data_block": "prompts",
    "fault_answer": "testing",
    "neutralize": "prompts",
    "parse_structured": "protocol",
    "render": "prompts",
    "step_of": "testing",
    "structured_call": "protocol",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
