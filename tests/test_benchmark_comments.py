import pytest

from benchmark.collisions import collisions
from benchmark.comments import REGISTERS, casual_pool, native_pools
from common.errors import UserError
from common.normalize import content_words


def test_pools_have_the_designed_sizes_and_unique_ids():
    casual = casual_pool()
    native = native_pools()
    assert len(casual) == 24
    assert all(len(native[r]) >= 6 for r in REGISTERS)
    ids = [c.id for c in casual] + [c.id for pool in native.values() for c in pool]
    assert len(ids) == len(set(ids))


def test_no_two_comments_share_a_content_word():
    """So a placebo comment can never be matched by another comment's words."""
    comments = casual_pool() + [c for pool in native_pools().values() for c in pool]
    seen = {}
    for comment in comments:
        for word in content_words(comment.text):
            assert word not in seen, f"{comment.id} and {seen[word]} share {word!r}"
            seen[word] = comment.id


def test_a_comment_does_not_collide_with_its_own_pool_text_only_when_absent():
    comment = casual_pool()[0]
    assert collisions(comment.text, comment.witness, ["Nothing related here."]) == []
    assert collisions(comment.text, comment.witness, [comment.text])  # with itself it must collide


def test_collision_reports_witness_and_inflected_content_words():
    found = collisions("btw this ships with friday's newsletter", "friday's newsletter",
                       ["The Newsletters go out weekly.", "x = 1  # FRIDAY'S NEWSLETTER"])
    assert any("witness" in f for f in found)
    assert any("newsletter" in f and "friday" in f for f in found)


def test_malformed_pool_line_names_file_and_line(tmp_path):
    path = tmp_path / "casual.jsonl"
    path.write_text('{"id":"c1","text":"hello there world","witness":"there world","proposition":"p"}\n'
                    '{"id":"c2","text":"a b","witness":"zzz yyy","proposition":"p"}\n')
    with pytest.raises(UserError, match=r"casual\.jsonl:2: witness"):
        casual_pool(path)
