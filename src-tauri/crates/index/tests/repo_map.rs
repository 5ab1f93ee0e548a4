//! The repo map: the definitions the project leans on come first, the conversation's focus
//! moves the map toward what it mentions, and the budget is kept.

use lantern_index::{repo_map, CodeIndex, Focus, Stamp};

/// A small shop: `money.py` is used by every other file; `report.py` and `cli.py` by none.
fn shop() -> CodeIndex {
    let stamp = Stamp {
        modified_ns: 1,
        len: 1,
    };
    let mut index = CodeIndex::default();
    index.update(
        "shop/money.py",
        stamp,
        "def to_cents(amount):\n    return int(amount * 100)\n",
    );
    index.update(
        "shop/cart.py",
        stamp,
        "from .money import to_cents\n\nclass Cart:\n    def total(self):\n        return to_cents(1)\n",
    );
    index.update(
        "shop/tax.py",
        stamp,
        "from .money import to_cents\n\ndef vat(amount):\n    return to_cents(amount) // 5\n",
    );
    index.update(
        "shop/report.py",
        stamp,
        "def monthly_report(rows):\n    return len(rows)\n",
    );
    index.update("shop/cli.py", stamp, "def main():\n    print(vat(3))\n");
    index
}

fn files_in_order(map: &str) -> Vec<&str> {
    map.lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.trim_end_matches(':'))
        .collect()
}

#[test]
fn the_definition_every_file_uses_comes_first() {
    let map = repo_map(&shop(), &Focus::default(), 2000);
    assert_eq!(files_in_order(&map)[0], "shop/money.py", "{map}");
    assert!(map.contains("  def to_cents(amount):\n"), "{map}");
    // Every file's top-level definitions are still listed when the budget allows.
    for name in [
        "class Cart:",
        "def vat(amount):",
        "def monthly_report(rows):",
        "def main():",
    ] {
        assert!(map.contains(name), "{name} in {map}");
    }
}

#[test]
fn a_mentioned_file_or_name_moves_the_map_toward_it() {
    let plain = repo_map(&shop(), &Focus::default(), 2000);
    let report = Focus {
        files: vec!["shop/report.py".into()],
        names: vec![],
    };
    let focused = repo_map(&shop(), &report, 2000);
    let position = |map: &str| {
        files_in_order(map)
            .iter()
            .position(|f| *f == "shop/report.py")
            .unwrap()
    };
    assert!(
        position(&focused) < position(&plain),
        "{plain}\n---\n{focused}"
    );
    let vat = Focus {
        files: vec![],
        names: vec!["vat".into()],
    };
    let by_name = repo_map(&shop(), &vat, 2000);
    assert!(
        files_in_order(&by_name)
            .iter()
            .position(|f| *f == "shop/tax.py")
            .unwrap()
            <= 1,
        "{by_name}"
    );
}

#[test]
fn the_map_keeps_its_budget() {
    for budget in [0, 40, 100, 300] {
        let map = repo_map(&shop(), &Focus::default(), budget);
        assert!(map.len() <= budget, "{budget}: {} chars\n{map}", map.len());
    }
    assert!(repo_map(&CodeIndex::default(), &Focus::default(), 1000).is_empty());
}
