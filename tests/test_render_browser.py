"""`gradtool render --format html` in a real browser: Debian's chromium driven by playwright
(never `playwright install`). Skipped, with the reason, where either is missing."""
import os
import shutil

import pytest

import cli_util as cu

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is not installed (pip install "
                                      "-e '.[test]')")
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium found (apt-get install chromium): browser tests need it")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Pages of examples/resnet_like.py made by the CLI: "open" (default grouping: every
    module frame open) and "shut" (--depth 0: the model one box)."""
    folder = tmp_path_factory.mktemp("pages")
    paths = {"open": folder / "open.html", "shut": folder / "shut.html"}
    results = cu.run_many([
        ["render", os.path.join(cu.EXAMPLES, "resnet_like.py"), "-o", paths["open"]],
        ["render", os.path.join(cu.EXAMPLES, "resnet_like.py"), "-o", paths["shut"],
         "--depth", "0"]])
    for r in results:
        assert r.returncode == 0, str(r)
    return paths


class Page:
    """A page loaded in chromium, with what it logged and requested."""

    def __init__(self, browser, path):
        self.page = browser.new_page(viewport={"width": 1300, "height": 850})
        self.errors, self.requests = [], []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error"
                     else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.as_uri()
        self.page.goto(self.url)

    def click_node(self, text):
        """Click the visible node whose label holds `text`."""
        self.page.locator(".view:not([hidden]) g.node", has_text=text).first.click()


@pytest.fixture
def open_page(browser, pages):
    p = Page(browser, pages["open"])
    yield p
    p.page.close()


@pytest.fixture
def shut_page(browser, pages):
    p = Page(browser, pages["shut"])
    yield p
    p.page.close()


def test_page_loads_with_no_console_errors_and_no_network(open_page, shut_page):
    for p in (open_page, shut_page):
        p.page.wait_for_timeout(200)
        assert p.errors == []
        assert p.requests == [p.url]  # the file itself, nothing else
        assert p.page.locator(".view:not([hidden]) g.node").count() > 10 or p is shut_page


def test_clicking_a_node_shows_its_saved_values(open_page):
    open_page.click_node("TanhBackward0")
    side = open_page.page.inner_text("#side")
    assert "TanhBackward0" in side and "_saved_result" in side
    assert "float64[2, 8]" in side and "version saved / now" in side and "0 / 0" in side
    assert "model › model.cell" in side and "examples/resnet_like.py:" in side
    assert "mean" in side and "the node's own output" in side
    assert open_page.errors == []


def test_clicking_a_collapsed_module_opens_it_and_the_breadcrumb_closes_it(shut_page):
    page = shut_page.page
    shut_page.click_node("model (ResNetLike)")
    assert "model (ResNetLike)" in page.inner_text("#crumbs")
    assert page.locator(".view:not([hidden]) g.node", has_text="model.embed.weight").count()
    page.locator("#crumbs a").first.click()  # back to the top: the model one box again
    assert page.inner_text("#crumbs").strip() == "resnet_like"
    assert page.locator(".view:not([hidden]) g.node", has_text="model.embed.weight").count() == 0
    assert shut_page.errors == []


def test_clicking_an_open_module_frame_folds_it(open_page):
    page = open_page.page
    weight = page.locator(".view:not([hidden]) g.node", has_text="model.head.weight").first
    assert weight.is_visible()
    frame = page.locator(".view:not([hidden]) g.cluster", has_text="model.head (Linear)").first
    frame.locator("text").first.click()
    assert not weight.is_visible()
    frame.locator("text").first.click()
    assert weight.is_visible()


def test_search_finds_nodes_by_module_path_and_shows_them(shut_page):
    page = shut_page.page
    page.fill("#search", "model.blocks.2.mlp")
    results = page.locator("#results div")
    assert results.count() >= 3  # the Linear, ReLU, Linear of that block's mlp
    assert "model.blocks.2.mlp" in page.inner_text("#results")
    results.first.click()  # opens the view that draws it and shows its details
    assert "model.blocks.2.mlp" in page.inner_text("#crumbs") + page.inner_text("#side")
    assert page.locator(".view:not([hidden]) g.node.hit").count() == 1
    assert shut_page.errors == []


def test_screenshot_of_the_page(open_page, tmp_path):
    path = tmp_path / "page.png"
    open_page.page.screenshot(path=str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_gradcheck_heatmap_page_reads_an_entry_under_the_mouse(browser, tmp_path):
    path = tmp_path / "report.html"
    r = cu.run("gradcheck", os.path.join(cu.EXAMPLES, "broken_wrong_gradient.py"), "--html", path)
    assert r.returncode == 1, str(r)
    p = Page(browser, path)
    try:
        maps = p.page.locator(".map")
        assert maps.count() == 3
        box = maps.first.bounding_box()
        # the bottom-right entry: input element 2, output element 2
        p.page.mouse.move(box["x"] + box["width"] * 5 / 6, box["y"] + box["height"] * 5 / 6)
        hover = p.page.inner_text(".hover")
        assert "input element 2, output element 2" in hover
        assert "numerical 1.23042" in hover and "analytical 0.820282" in hover
        for img in p.page.locator(".map img").all():  # the inline PNGs decoded
            assert img.evaluate("i => i.naturalWidth") == 3
        assert p.errors == [] and p.requests == [p.url]
    finally:
        p.page.close()
