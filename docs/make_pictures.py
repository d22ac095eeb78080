"""Remake the README's pictures with gradtool itself, from examples/resnet_like.py:
docs/resnet_like.svg (the grouped drawing) and docs/render_html.png (the HTML explorer in
chromium, a node found by search and highlighted with its inputs and consumers). Needs the system chromium and the playwright package (test extras).

    .venv/bin/python docs/make_pictures.py
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GRADTOOL = os.path.join(os.path.dirname(sys.executable), "gradtool")
EXAMPLE = "examples/resnet_like.py"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main():
    subprocess.run([GRADTOOL, "render", EXAMPLE, "--depth", "2", "-o", "docs/resnet_like.svg"],
                   cwd=REPO, check=True)
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as folder:
        page_path = os.path.join(folder, "resnet_like.html")
        subprocess.run([GRADTOOL, "render", EXAMPLE, "-o", page_path], cwd=REPO, check=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 800})
            page.goto("file://" + page_path)
            page.wait_for_function("() => window.gradtool && window.gradtool.cy")
            page.fill("#search", "model.blocks.1.norm")
            page.locator("#results div", has_text="NativeLayerNormBackward0").first.click()
            page.wait_for_function("() => gradtool.cy.nodes('.hit').length === 1")
            page.screenshot(path=os.path.join(HERE, "render_html.png"))
            browser.close()


if __name__ == "__main__":
    main()
