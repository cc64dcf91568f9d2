"""Issue 43, item 4: the demo's ten requests and a mixed registry, read by hand.

The mixed registry is the Python standard library (``toolret.sources.stdlib_registry``, the demo's)
plus fifty everyday tools (``tests/langchain_toolret/registry50.py``: mail, calendar, home, travel,
money). Every request is searched with the shipped default (``fast``, the hand-set fusion), the
eefafaa reference fusion and the opt-in learned fusion; the top 3 of each are printed, with the
tool a reader expects marked ``*`` when it is first and ``+`` when it is in the top 3.

Usage: ``python experiments/mixed43.py`` (about a minute: the registry is embedded once).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.eval.reference_fusions import reference_config
from toolret.sources.stdlib_registry import stdlib_tools

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(
    "registry50", HERE.parent / "tests" / "langchain_toolret" / "registry50.py"
)
assert _spec is not None and _spec.loader is not None
registry50 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(registry50)

#: (request, the tool a reader expects; None: several are right, read by hand)
DEMO = [
    ("what is the factorial of 12?", "math.factorial"),
    ("give me the median of these exam scores", "statistics.median"),
    ("split a file path into its directory and file name", "os.path.split"),
    ("parse this JSON string into a Python object", "json.loads"),
    ("wrap a long paragraph to 60 characters per line", "textwrap.fill"),
    ("copy a whole directory tree to a backup folder", "shutil.copytree"),
    ("pick a random element from a list", "random.choice"),
    ("how many days are there in February 2028?", "calendar.monthrange"),
    ("compute the SHA-256 digest of some bytes", None),
    ("check whether 'report_*.csv' matches the file name report_2024.csv", "fnmatch.fnmatch"),
]
MIXED = [
    ("any new mail?", "read_inbox"),
    ("new mail", "read_inbox"),
    ("email Ann the quarterly report", "send_email"),
    ("what's the temperature outside in Oslo?", "get_weather"),
    ("make it warmer in the living room, 22 degrees", "set_thermostat"),
    ("put on some jazz", "play_music"),
    ("how much is 100 dollars in euros?", "convert_currency"),
    ("remind me to call mum at 6pm", "set_reminder"),
    ("what's on my calendar tomorrow?", "list_calendar_events"),
    ("read the file notes.txt", "read_file"),
    ("compress these logs into a zip", "compress_files"),
    ("what is the square root of 2?", "math.sqrt"),
]


def _everyday() -> list[dict[str, object]]:
    return [
        {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {"request": {"type": "string", "description": "What the user asked for."}},
                "required": ["request"],
            },
        }
        for name, description in registry50.SPECS
    ]


def main() -> None:
    kb = ToolKnowledgeBase(None)
    kb.sync([*stdlib_tools(), *_everyday()])
    configs = {
        "fast (default)": RetrievalConfig.preset("fast"),
        "eefafaa": reference_config("fusion-eefafaa"),
        "learned": RetrievalConfig.preset("fast").with_(fusion={"method": "learned"}),
    }
    print(f"{len(kb)} tools: the standard library and fifty everyday tools\n")
    firsts = dict.fromkeys(configs, 0)
    for title, requests in (("The demo's ten requests", DEMO), ("The mixed registry", MIXED)):
        print(f"## {title}\n")
        for request, expected in requests:
            print(f"> {request}   (expected: {expected or 'read by hand'})")
            for label, config in configs.items():
                names = [t.name for t in kb.search(request, k=3, config=config).tools]
                mark = "*" if names[:1] == [expected] else "+" if expected in names else " "
                firsts[label] += mark == "*"
                print(f"   {mark} {label:<15} {', '.join(names)}")
            print()
    scored = sum(1 for _, e in DEMO + MIXED if e is not None)
    print("first place, of", scored, "requests with one expected tool:", firsts)


if __name__ == "__main__":
    main()
