"""audit in a real browser: headless Chromium (Debian `chromium` + `chromium-driver`, driven by
selenium) opens the site from file://, every card renders with loadable audio and spectrograms,
answers typed on the keyboard survive a reload, judgments.json downloads and `audit score` reads it.

Also a script: `python tests/test_audit_browser.py SITE OUT.png` takes the README screenshot with the
same browser settings.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
CHROMEDRIVER = shutil.which("chromedriver")


def make_driver(download_dir: Path, width: int = 1100, height: int = 900):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--mute-audio",
                f"--window-size={width},{height}", "--hide-scrollbars"):
        options.add_argument(arg)
    options.add_experimental_option(
        "prefs", {"download.default_directory": str(download_dir), "download.prompt_for_download": False}
    )
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def wait_for(predicate, timeout: float = 30.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)


MEDIA_STATE = """return Array.from(document.querySelectorAll('audio')).map(a =>
    ({src: a.getAttribute('src'), ready: a.readyState, error: a.error ? a.error.code : null,
      duration: a.duration, preload: a.getAttribute('preload')}));"""


def media_settled(driver):
    state = driver.execute_script(MEDIA_STATE)
    return state if all(s["ready"] >= 1 or s["error"] is not None for s in state) else None


def screenshot(site: Path, out: Path) -> None:
    """PNG of the page's first card with one clip answered (the README figure)."""
    from selenium.webdriver.common.action_chains import ActionChains

    driver = make_driver(out.parent, width=1000, height=860)
    try:
        driver.get((site / "index.html").resolve().as_uri())
        wait_for(lambda: media_settled(driver), what="audio metadata")
        driver.find_element("id", "listener").send_keys("ann")
        ActionChains(driver).send_keys("\n").send_keys("1").perform()
        png = driver.get_screenshot_as_png()
    finally:
        driver.quit()
    import io

    from PIL import Image

    # 128 colours keep the figure small (about 45 KB) with no visible loss on this flat page
    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)


if __name__ == "__main__":
    screenshot(Path(sys.argv[1]), Path(sys.argv[2]))
    sys.exit(0)


selenium = pytest.importorskip("selenium", reason="selenium is not installed (pip install '.[test]')")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip(
        "needs system Chromium and its driver (Debian: apt-get install chromium chromium-driver); "
        f"found chromium={CHROMIUM}, chromedriver={CHROMEDRIVER}",
        allow_module_level=True,
    )

from reasonaudio.audit import build_site  # noqa: E402
from reasonaudio.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def bench(bf, tmp_path_factory) -> Path:
    return bf.write_benchmark(tmp_path_factory.mktemp("bench") / "fixture")


@pytest.fixture(scope="module")
def site(bench: Path, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("site") / "site"
    return out, build_site(bench, out, per_task=50, seed=3, extra=1)


@pytest.fixture(scope="module")
def downloads(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def driver(downloads: Path):
    try:
        d = make_driver(downloads)
    except Exception as err:  # a browser that cannot start here is an environment problem, not a failure
        pytest.skip(f"headless Chromium did not start: {err.__class__.__name__}: {str(err).splitlines()[0]}")
    yield d
    d.quit()


def test_every_card_renders_with_loadable_audio(bf, site, driver) -> None:
    out, data = site
    driver.get((out / "index.html").as_uri())
    state = wait_for(lambda: media_settled(driver), what="every <audio> to load its metadata")
    expected = [c["audio"] for card in data["cards"] for c in card["clips"]]
    assert [s["src"] for s in state] == expected
    assert all(s["error"] is None and s["ready"] >= 1 and s["preload"] == "metadata" for s in state), state
    assert all(abs(s["duration"] - bf.CLIP_S) < 0.01 for s in state)
    cards = driver.execute_script("""return Array.from(document.querySelectorAll('section.card')).map(c => ({
        query: c.dataset.queryId, text: c.querySelector('.text').textContent,
        logic: Array.from(c.querySelectorAll('.logic li')).map(li => li.textContent),
        clips: Array.from(c.querySelectorAll('.clip')).map(k => k.dataset.clipId),
        images: Array.from(c.querySelectorAll('.clip img')).map(i => i.complete && i.naturalWidth),
        buttons: c.querySelectorAll('.answers button').length}));""")
    assert len(cards) == len(data["cards"]) == 9
    for shown, card in zip(cards, data["cards"]):
        assert shown["query"] == card["query_id"]
        assert shown["text"] == f"\u201c{card['text']}\u201d" and shown["logic"] == card["logic"]
        assert shown["clips"] == [c["clip_id"] for c in card["clips"]]
        assert shown["images"] == [480] * len(card["clips"])
        assert shown["buttons"] == 3 * len(card["clips"])
    assert driver.find_element("id", "progress").text == "0 / 9"
    assert driver.find_element("id", "position").text == "card 1 of 9"
    visible = [c for c in driver.find_elements("css selector", "section.card") if c.is_displayed()]
    assert [c.get_attribute("data-query-id") for c in visible] == [data["cards"][0]["query_id"]]


def test_keyboard_answers_reload_download_and_score(bf, site, driver, downloads: Path, bench: Path, capsys) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    out, data = site
    driver.get((out / "index.html").as_uri())
    driver.execute_script("localStorage.clear()")
    driver.refresh()
    wait_for(lambda: media_settled(driver), what="audio metadata")
    listener = driver.find_element("id", "listener")
    listener.send_keys("ann")
    listener.send_keys(Keys.ENTER)  # leaves the field, so the next keys are shortcuts again

    keys = ActionChains(driver)
    first, second, third = data["cards"][:3]
    plan = {}  # (query, clip) -> answer, in the order typed
    for card, typed in ((first, "123"), (second, "yn"), (third, "u")):
        for clip, key in zip(card["clips"], typed):
            keys.send_keys(key)
            plan[(card["query_id"], clip["clip_id"])] = {"1": "yes", "y": "yes", "2": "no", "n": "no", "3": "unsure", "u": "unsure"}[key]
        keys.send_keys(Keys.ARROW_RIGHT)
    keys.perform()
    complete = sum(len(card["clips"]) <= len(t) for card, t in ((first, "123"), (second, "yn"), (third, "u")))
    assert driver.find_element("id", "progress").text == f"{complete} / 9"
    assert driver.find_element("id", "position").text == "card 4 of 9"

    ActionChains(driver).send_keys(Keys.ARROW_LEFT).send_keys(Keys.ARROW_LEFT).send_keys(Keys.ARROW_LEFT).perform()
    pressed = driver.execute_script("""return Array.from(document.querySelectorAll('section.card.current .clip')).map(k =>
        (k.querySelector('button[aria-pressed=true]') || {dataset: {}}).dataset.answer || null);""")
    assert pressed == [plan.get((first["query_id"], c["clip_id"])) for c in first["clips"]]

    driver.refresh()  # answers, name and position live in localStorage, keyed by the site id
    wait_for(lambda: driver.find_element("id", "progress").text == f"{complete} / 9", what="restored progress")
    assert driver.find_element("id", "listener").get_attribute("value") == "ann"
    stored = json.loads(driver.execute_script(f"return localStorage.getItem('reasonaudio-audit:{data['site_id']}')"))
    assert sum(len(v) for v in stored["answers"].values()) == len(plan)

    target = downloads / "judgments.json"
    target.unlink(missing_ok=True)
    ActionChains(driver).send_keys("d").perform()
    wait_for(lambda: target.is_file() and not list(downloads.glob("*.crdownload")), timeout=20, what="judgments.json download")
    doc = wait_for(lambda: target.stat().st_size and json.loads(target.read_text()), what="a complete judgments.json")
    assert doc["site_id"] == data["site_id"] and doc["bench"] == data["bench"] and doc["listener"] == "ann"
    assert doc["n_cards"] == 9 and doc["n_cards_answered"] == complete
    assert {(r["query_id"], r["clip_id"]): r["answer"] for r in doc["answers"]} == plan

    assert main(["audit", "score", str(target), "--bench", str(bench), "--bootstrap", "200"]) == 0
    text = capsys.readouterr().out
    assert f"listener ann: {len(plan)} answers" in text
    relevant = {(q, c) for q, cs in bf.QRELS.items() for c in cs}
    decided = {k: a for k, a in plan.items() if a != "unsure"}
    agree = sum((a == "yes") == (k in relevant) for k, a in decided.items())
    assert "ann              all" in text and f"{agree:>4}/{len(decided):<4}" in text
