//! A map of what matters in a project: its most important definitions' signature lines,
//! grouped by file, as many as fit a budget.
//!
//! Importance comes from the index's graph: a file that uses a name another file defines
//! points at that file, weighted by how often it uses it. A personalised PageRank over those
//! arrows ranks the files — personalised toward the files and names the conversation mentions,
//! so that the map of the same project differs with the question — and each file's rank flows
//! along its arrows to the definitions it uses. The best-ranked definitions are listed first.

use crate::index::CodeIndex;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How far a rank flows along the arrows at each step, as in PageRank (the rest goes back to
/// the personalisation).
const DAMPING: f64 = 0.85;
/// Steps of the power iteration: enough for ranks to settle to well under a percent.
const ITERATIONS: usize = 30;
/// A name defined in more files than this says nothing about which one is meant (`new`,
/// `init`, `get`): its uses draw no arrows.
const MAX_DEFINING_FILES: usize = 8;
/// The weight of a mentioned file in the personalisation, against 1 for any other.
const MENTIONED_FILE_WEIGHT: f64 = 50.0;
/// The weight of a file that defines a mentioned name, and the factor on arrows for a
/// mentioned name.
const MENTIONED_NAME_WEIGHT: f64 = 10.0;

/// What the conversation is about: files and names it mentions.
#[derive(Debug, Clone, Default)]
pub struct Focus {
    pub files: Vec<String>,
    pub names: Vec<String>,
}

/// The map of `index`'s project, at most `budget` characters: file paths followed by the
/// signature lines of their most important definitions, the most important first. Empty when
/// the index holds nothing.
///
/// ```
/// use lantern_index::{repo_map, CodeIndex, Focus, Stamp};
/// let mut index = CodeIndex::default();
/// let stamp = Stamp { modified_ns: 1, len: 1 };
/// index.update("lib.py", stamp, "def helper():\n    pass\n");
/// index.update("app.py", stamp, "from lib import helper\n\ndef main():\n    helper()\n");
/// let map = repo_map(&index, &Focus::default(), 500);
/// assert!(map.starts_with("lib.py:\n  def helper():\n"), "{map}");
/// ```
pub fn repo_map(index: &CodeIndex, focus: &Focus, budget: usize) -> String {
    let files: Vec<&str> = index.files().map(|(path, _)| path).collect();
    if files.is_empty() {
        return String::new();
    }
    let id: HashMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    let mentioned: HashSet<&str> = focus.names.iter().map(String::as_str).collect();
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, path) in files.iter().enumerate() {
        for d in index.outline(path).unwrap_or_default() {
            let list = definers.entry(d.name.as_str()).or_default();
            if list.last() != Some(&i) {
                list.push(i);
            }
        }
    }
    // Arrows: (from, to, name) → weight.
    let mut arrows: BTreeMap<(usize, usize, &str), f64> = BTreeMap::new();
    for (from, path) in files.iter().enumerate() {
        for reference in index.references_of(path) {
            let name = reference.name.as_str();
            let Some(to) = definers.get(name).filter(|d| d.len() <= MAX_DEFINING_FILES) else {
                continue;
            };
            let mut weight = f64::from(reference.count).sqrt() / to.len() as f64;
            if mentioned.contains(name) {
                weight *= MENTIONED_NAME_WEIGHT;
            }
            if name.starts_with('_') || name.len() < 3 {
                weight *= 0.1;
            }
            for &to in to.iter().filter(|&&to| to != from) {
                *arrows.entry((from, to, name)).or_default() += weight;
            }
        }
    }
    let personal = personalisation(&files, &id, focus, &definers);
    let rank = page_rank(files.len(), &arrows, &personal);
    // Each file's rank flows along its arrows to the definitions it uses.
    let mut out_weight = vec![0.0; files.len()];
    for (&(from, _, _), &w) in &arrows {
        out_weight[from] += w;
    }
    let mut definition_rank: HashMap<(usize, &str), f64> = HashMap::new();
    for (&(from, to, name), &w) in &arrows {
        *definition_rank.entry((to, name)).or_default() += rank[from] * w / out_weight[from];
    }
    let mut ranked: Vec<((usize, &str), f64)> = definition_rank.into_iter().collect();
    // A file nothing points at still shows what it defines, after the rest, by its own rank.
    for (i, path) in files.iter().enumerate() {
        for d in index
            .outline(path)
            .unwrap_or_default()
            .iter()
            .filter(|d| d.parent.is_none())
        {
            ranked.push(((i, d.name.as_str()), rank[i] * 1e-3));
        }
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    render(index, &files, &ranked, budget)
}

/// The starting weight of each file: 1, more for the files mentioned and those that define a
/// mentioned name; normalised to sum to 1.
fn personalisation(
    files: &[&str],
    id: &HashMap<&str, usize>,
    focus: &Focus,
    definers: &HashMap<&str, Vec<usize>>,
) -> Vec<f64> {
    let mut weight = vec![1.0; files.len()];
    for file in &focus.files {
        if let Some(&i) = id.get(file.as_str()) {
            weight[i] += MENTIONED_FILE_WEIGHT;
        }
    }
    for name in &focus.names {
        for &i in definers.get(name.as_str()).map_or(&[][..], Vec::as_slice) {
            weight[i] += MENTIONED_NAME_WEIGHT;
        }
    }
    let sum: f64 = weight.iter().sum();
    weight.iter().map(|w| w / sum).collect()
}

/// PageRank with a personalisation vector: a file without arrows gives its rank back to the
/// personalisation, as a random surfer starts again.
fn page_rank(n: usize, arrows: &BTreeMap<(usize, usize, &str), f64>, personal: &[f64]) -> Vec<f64> {
    let mut out_weight = vec![0.0; n];
    for (&(from, _, _), &w) in arrows {
        out_weight[from] += w;
    }
    let mut rank = personal.to_vec();
    for _ in 0..ITERATIONS {
        let dangling: f64 = (0..n)
            .filter(|&i| out_weight[i] == 0.0)
            .map(|i| rank[i])
            .sum();
        let mut next: Vec<f64> = personal
            .iter()
            .map(|p| (1.0 - DAMPING) * p + DAMPING * dangling * p)
            .collect();
        for (&(from, to, _), &w) in arrows {
            next[to] += DAMPING * rank[from] * w / out_weight[from];
        }
        rank = next;
    }
    rank
}

/// The ranked definitions, grouped under their files in the order each file first appears,
/// as many as fit `budget` characters.
fn render(
    index: &CodeIndex,
    files: &[&str],
    ranked: &[((usize, &str), f64)],
    budget: usize,
) -> String {
    let mut order: Vec<usize> = Vec::new();
    let mut lines: HashMap<usize, Vec<&str>> = HashMap::new();
    let mut used = 0;
    let mut seen: HashSet<(usize, &str)> = HashSet::new();
    for &((file, name), _) in ranked {
        if !seen.insert((file, name)) {
            continue;
        }
        let outline = index.outline(files[file]).unwrap_or_default();
        for d in outline.iter().filter(|d| d.name == name) {
            let header = if lines.contains_key(&file) {
                0
            } else {
                files[file].len() + 2
            };
            let cost = header + d.signature.len() + 3;
            if used + cost > budget {
                continue;
            }
            used += cost;
            if header > 0 {
                order.push(file);
            }
            lines.entry(file).or_default().push(d.signature.as_str());
        }
    }
    let mut map = String::new();
    for file in order {
        map.push_str(files[file]);
        map.push_str(":\n");
        for line in &lines[&file] {
            map.push_str("  ");
            map.push_str(line);
            map.push('\n');
        }
    }
    map
}
