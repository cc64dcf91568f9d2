"""The dependency stage: a chosen tool's unfilled identifier brings in the tool that produces it."""

from __future__ import annotations

import pytest

from toolret import RetrievalConfig, ScoredTool, ToolDoc, ToolParam
from toolret.config import DependencyConfig
from toolret.documents.identifiers import DependencyIndex
from toolret.scoring.mftr import CandidateScore
from toolret.search.dependencies import add_producers, keep_producers, query_fills

ON = DependencyConfig(enabled=True, depth=3, min_score=None, max_added=1, placement="before")


def _rest(path: str, description: str, *, response: str = '{"id": 1}', **params: str) -> ToolDoc:
    return ToolDoc(
        name=f"GET {path}",
        description=description,
        response=response,
        parameters=[ToolParam(name=n, type=t, required=True) for n, t in params.items()],
    )


TMDB = [
    _rest("/movie/{movie_id}/credits", "Get the cast and crew of a movie.", movie_id="integer"),
    _rest("/search/movie", "Search for movies by their original, translated and alternative titles.", query="string"),
    _rest("/movie/{movie_id}/reviews", "Get the user reviews for a movie.", movie_id="integer"),
    _rest("/person/{person_id}", "Get the primary person details by id.", person_id="integer"),
    _rest("/search/person", "Search for people.", query="string"),
    _rest("/movie/top_rated", "Get the top rated movies on TMDb."),
    _rest("/tv/{tv_id}/credits", "Get the credits of a TV show.", tv_id="integer"),
]
TOOLE = [
    ToolDoc(name="get_weather", description="Current weather for a city."),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
    ToolDoc(name="find_restaurants", description="Find restaurants near a place."),
    ToolDoc(name="send_email", description="Send an e-mail message."),
]


@pytest.fixture(scope="module")
def tmdb(make_kb):
    return make_kb(TMDB)


def test_a_path_identifier_is_a_need_and_search_endpoints_produce_it():
    index = DependencyIndex.build(TMDB)
    (need,) = index.needs[0]
    assert (need.param, need.word) == ("movie_id", "movie")
    producers = {TMDB[i].name for i in index.producers_of(need)}
    # Tools that name movies and do not themselves need a movie id; never the consumers.
    assert producers == {"GET /search/movie", "GET /movie/top_rated"}


def test_a_bare_id_takes_its_entity_from_the_path_segment():
    album = _rest("/albums/{id}/tracks", "Get the tracks of an album.", id="string")
    search = _rest("/search", "Search for albums, artists and tracks.", q="string")
    index = DependencyIndex.build([album, search])
    assert index.needs[0][0].word == "album"
    assert index.producers_of(index.needs[0][0]) == (1,)


def test_a_query_that_carries_the_id_needs_no_producer():
    need = DependencyIndex.build(TMDB).needs[0][0]
    assert not query_fills(need, "Who was the lead actor in The Dark Knight?")
    assert not query_fills(need, "Who directed the top-1 rated movie of 2019?")  # counts and years are not ids
    assert query_fills(need, "cast of movie 550")
    assert query_fills(need, "credits for id 27205")
    assert query_fills(need, "credits of 9021441")


def _pool(scores: dict[int, float]) -> dict[int, CandidateScore]:
    return {i: CandidateScore(index=i, score=s, field_scores={}, penalty=0.0) for i, s in scores.items()}


def _listed(snap, indexes: list[int]) -> list[ScoredTool]:
    return [ScoredTool(id=snap.docs[i].id, name=snap.docs[i].name, score=5.0 - n) for n, i in enumerate(indexes)]


def test_the_best_scoring_producer_is_placed_before_its_consumer(tmdb):
    snap = tmdb._writer.snapshot
    order = [snap.index_of[t.name] for t in TMDB]
    tools = _listed(snap, [order[0], order[2], order[6]])
    pool = _pool({order[1]: 0.4, order[5]: 1.2, order[0]: 3.0})
    out, notes = add_producers(tools, snap, "who directed the best rated movie?", pool, 3, ON)
    credits, reviews = "GET /movie/{movie_id}/credits", "GET /movie/{movie_id}/reviews"
    assert [t.id for t in out] == ["GET /movie/top_rated", credits, reviews]
    assert out[0].serves == credits
    assert len(notes) == 1 and "movie_id" in notes[0]


def test_a_request_that_names_something_gets_the_producer_that_looks_it_up(tmdb):
    # "The Dark Knight" is a title: the search endpoint turns it into an id, whatever the list endpoints score.
    snap = tmdb._writer.snapshot
    order = [snap.index_of[t.name] for t in TMDB]
    tools = _listed(snap, [order[0], order[2]])
    pool = _pool({order[1]: 0.4, order[5]: 1.2, order[0]: 3.0})
    out, _ = add_producers(tools, snap, "Who was the lead actor in The Dark Knight?", pool, 3, ON)
    assert [t.id for t in out][:2] == ["GET /search/movie", "GET /movie/{movie_id}/credits"]


def test_no_producer_when_the_query_carries_the_id(tmdb):
    snap = tmdb._writer.snapshot
    tools = _listed(snap, [snap.index_of["GET /movie/{movie_id}/credits"]])
    pool = _pool({snap.index_of["GET /search/movie"]: 2.0})
    out, notes = add_producers(tools, snap, "cast of movie 550", pool, 5, ON)
    assert [t.id for t in out] == ["GET /movie/{movie_id}/credits"] and not notes


def test_never_more_than_k_and_never_outside_the_registry(tmdb):
    snap = tmdb._writer.snapshot
    idx = [snap.index_of[t.name] for t in TMDB]
    tools = _listed(snap, [idx[0], idx[3], idx[6]])
    pool = _pool({idx[1]: 1.0, idx[4]: 1.0, 999: 9.0})  # an index outside the snapshot is never a producer
    config = ON.model_copy(update={"max_added": 3})
    out, _ = add_producers(tools, snap, "Who played in Heat and who is Al Pacino?", pool, 3, config)
    assert len(out) == 3
    assert all(t.id in snap.index_of for t in out)
    # The first pair (producer, consumer) is kept whole; a tool outside it made room, and a second
    # pair that would not fit was not started.
    assert [t.id for t in out] == ["GET /search/movie", "GET /movie/{movie_id}/credits", "GET /person/{person_id}"]
    assert out[0].serves == out[1].id and out[2].serves is None


def test_k_auto_keeps_a_producer_with_its_consumer():
    producer = ScoredTool(id="search", name="search", score=0.2, serves="details")
    consumer = ScoredTool(id="details", name="details", score=3.0)
    other = ScoredTool(id="other", name="other", score=2.9)
    kept = keep_producers([consumer, other], [producer, consumer, other], max_k=5)
    assert [t.id for t in kept] == ["search", "details", "other"]
    assert [t.id for t in keep_producers([consumer, other], [producer, consumer, other], max_k=2)] == [
        "search",
        "details",
    ]
    assert keep_producers([other], [producer, consumer, other], max_k=5) == [other]


def test_a_registry_without_identifiers_is_untouched(make_kb):
    kb = make_kb(TOOLE)
    assert not kb._writer.snapshot.dependencies
    config = RetrievalConfig.preset("fast").with_(dependencies={"enabled": False})
    on = kb.search("convert 100 dollars to euros and email Bob", k=3)
    off = kb.search("convert 100 dollars to euros and email Bob", k=3, config=config)
    assert on.ids == off.ids
    assert all(t.serves is None for t in on.tools)
    assert not [s for s in on.trace if s.stage == "dependencies"]  # the trace is untouched too


def test_search_adds_the_producer_and_says_so_in_the_trace(tmdb):
    config = RetrievalConfig.preset("fast").with_(dependencies={"placement": "before"})
    result = tmdb.search("Who was the lead actor in the movie The Dark Knight?", k=3, config=config)
    steps = [s for s in result.trace if s.stage == "dependencies"]
    assert len(steps) == 1 and steps[0].path == "offline"
    assert len(result.tools) <= 3 and set(result.ids) <= {t.name for t in TMDB}
    added = [t for t in result.tools if t.serves]
    assert added and added[0].id in {"GET /search/movie", "GET /movie/top_rated"}
    assert result.ids.index(added[0].id) < result.ids.index(added[0].serves)
    auto = tmdb.search("Who was the lead actor in the movie The Dark Knight?", k="auto", config=config)
    for tool in auto.tools:
        if tool.serves:
            assert tool.serves in auto.ids


def test_the_default_adds_the_producer_right_after_its_consumer(tmdb):
    result = tmdb.search("Who was the lead actor in the movie The Dark Knight?", k=3)
    added = [t for t in result.tools if t.serves]
    assert added and result.ids.index(added[0].id) == result.ids.index(added[0].serves) + 1


def test_path_only_leaves_identifiers_outside_a_path_alone(make_kb):
    # A plain function's ``user_id`` may be in the request under another form; only REST path
    # parameters (which a request can never fill) call for a producer by default.
    tools = [
        ToolDoc(
            name="get_user_orders",
            description="Orders placed by a user.",
            parameters=[ToolParam(name="user_id", type="string", required=True)],
        ),
        ToolDoc(
            name="find_user",
            description="Find a user by name.",
            parameters=[ToolParam(name="name", type="string", required=True)],
        ),
    ]
    kb = make_kb(tools)
    assert all(t.serves is None for t in kb.search("orders of the user Ada Lovelace", k=2).tools)
    loose = RetrievalConfig.preset("fast").with_(dependencies={"path_only": False})
    result = kb.search("orders of the user Ada Lovelace", k=2, config=loose)
    assert [t.serves for t in result.tools if t.serves] == ["get_user_orders"]


def test_the_dependency_config_is_validated():
    from toolret import ConfigError

    with pytest.raises(ConfigError):
        RetrievalConfig().with_(dependencies={"depth": 0})
    with pytest.raises(ConfigError):
        RetrievalConfig().with_(dependencies={"placement": "middle"})
