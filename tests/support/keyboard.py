"""The answer pages' keyboard script, run in node against a minimal DOM built from a page's own HTML.

The DOM has what the script can use: the form's radio choices (checking one unchecks the
others of its group), found by name and value or through their labels and the key each
label shows in <kbd>; the note; the previous and next links; the active element. A test
presses keys and reads, after each, what is checked, where the focus is, how many times
the form was submitted and where the page went. Where node is not installed, the test
is skipped.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

CHOICE = re.compile(r'<label><input type="radio" name="([a-z_]+)" value="([a-z_]*)"[^>]*> [^<]* <kbd>([^<]*)</kbd>'
                    r'</label>')

KEYBOARD = r"""
const spec = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const body = {tagName: 'BODY'};
let active = body, submitted = 0;
const radios = [], labels = [];
for (const [name, value, key] of spec.choices) {  // radio buttons: checking one unchecks the others of its group
  const radio = {tagName: 'INPUT', name, value, on: false, focus() { active = radio; },
                 get checked() { return radio.on; },
                 set checked(v) {
                   if (v) { radios.forEach(r => { if (r.name === name) { r.on = false; } }); }
                   radio.on = v;
                 }};
  radios.push(radio);
  const kbd = {tagName: 'KBD', textContent: key};
  labels.push({tagName: 'LABEL', querySelector(s) { return s === 'kbd' ? kbd : s === 'input' ? radio : null; }});
}
labels.push({tagName: 'LABEL', querySelector() { return null; }});  // the note's label: no choice, no key
const note = {tagName: 'TEXTAREA', focus() { active = note; }, blur() { active = body; }};
const form = {
  querySelector(selector) {
    const [, name, value] = selector.match(/name="([^"]*)"\]\[value="([^"]*)"/);
    return radios.find(r => r.name === name && r.value === value) || null;
  },
  querySelectorAll(selector) {
    if (selector === 'label') { return labels; }
    const name = selector.match(/name="([^"]*)"/)[1];
    return radios.filter(r => r.name === name);
  },
  requestSubmit() { submitted += 1; },
};
const links = {previous: {getAttribute: () => '/case/1'}, next: {getAttribute: () => '/case/3'}};
let handler = null;
global.document = {
  getElementById(id) { return id === 'answer' ? form : id === 'note' ? note : links[id] || null; },
  addEventListener(type, fn) { if (type === 'keydown') { handler = fn; } },
  get activeElement() { return active; },
};
global.window = {location: {href: ''}};
eval(spec.script);
const log = [];
for (const [key, shift] of spec.keys) {
  let prevented = false;
  handler({key, shiftKey: shift, ctrlKey: false, metaKey: false, altKey: false, isComposing: false,
           preventDefault() { prevented = true; }});
  const checked = {};
  radios.forEach(r => { if (!(r.name in checked)) { checked[r.name] = null; } });
  radios.forEach(r => { if (r.checked) { checked[r.name] = r.value; } });
  log.push({key, prevented, checked, focus: active === note ? 'note' : active.tagName, submitted,
            href: window.location.href});
}
console.log(JSON.stringify(log));
"""


def press(html: str, keys: list[tuple[str, bool]]) -> list[dict]:
    """Run the page's script on its choices, press `keys` ((key, shift) each) and log what each did."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's key handling is checked where it is")
    script = re.search(r"<script>(.*)</script>", html, re.S).group(1)
    spec = {"script": script, "choices": CHOICE.findall(html), "keys": keys}
    done = subprocess.run([node, "-e", KEYBOARD], input=json.dumps(spec), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
