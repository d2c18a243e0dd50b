"""The one reader of `feeds:`: what each experiment's config says it publishes.

An experiment's `feeds` may hold `title`, `order`, `note`, `in_suite`, `table` (its REPORT
section's table), `tables` (named tables for the marked blocks of README and docs/),
`figures` and `claims`. Tables no experiment owns are declared in `tables.yaml` beside this
module.
"""

from pathlib import Path

from omegaconf import OmegaConf

from .._checkout import CONF_DIR as _CONF_DIR

CONF_DIR = _CONF_DIR / "experiment"
OWN_TABLES = Path(__file__).with_name("tables.yaml")


def _load(path):
    return OmegaConf.to_container(OmegaConf.load(path))


def feeds(name, conf_dir=CONF_DIR):
    """The `feeds` of conf/experiment/<name>.yaml (empty when absent)."""
    path = Path(conf_dir) / f"{name}.yaml"
    return (_load(path).get("feeds") or {}) if path.exists() else {}


def declared(conf_dir=CONF_DIR):
    """[(experiment, feeds)] of every config with `feeds`, in report order."""
    found = []
    for path in sorted(Path(conf_dir).glob("*.yaml")):
        conf = _load(path)
        if conf.get("feeds"):
            found.append((conf.get("experiment", {}).get("name", path.stem), conf["feeds"]))
    return sorted(found, key=lambda item: (item[1].get("order", 1000), item[0]))


def in_suite(name, conf_dir=CONF_DIR):
    """Whether `make figures` runs experiment `name` (`feeds.in_suite`, default yes)."""
    return bool(feeds(name, conf_dir).get("in_suite", True))


def figures(conf_dir=CONF_DIR):
    """{figure: [panel, ...]} from every `feeds.figures`; each panel is its config entry plus
    `experiment` (whose CSVs it reads), in `panel` order."""
    found = {}
    for name, declared_feeds in sorted(declared(conf_dir)):
        for entry in declared_feeds.get("figures") or []:
            found.setdefault(entry["name"], []).append({**entry, "experiment": name})
    return {fig: sorted(panels, key=lambda p: p.get("panel", 0)) for fig, panels in found.items()}


def tables(conf_dir=CONF_DIR):
    """{table: spec} of every named table; a spec carries the `feeds` of the experiment that
    declares it (`feeds`, for the published and the paper's figures), empty for our own."""
    found = {name: {**spec, "feeds": {}} for name, spec in _load(OWN_TABLES).items()}
    for _, declared_feeds in declared(conf_dir):
        for name, spec in (declared_feeds.get("tables") or {}).items():
            found[name] = {**spec, "feeds": declared_feeds}
    return found
