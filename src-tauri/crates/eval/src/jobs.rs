//! Many runs at once: each job loads its own model and takes the next run not yet taken.

use crate::given::FirstCallGiven;
use crate::run::{run_task, TaskOutcome};
use crate::task::EvalTask;
use lantern_core::agent::AgentConfig;
use lantern_core::model::{MadeCall, Model};
use lantern_core::toolbox::Toolbox;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How the runs of an evaluation are shared out: how many at once, how each job gets its
/// model, and who hears of each run as it ends.
pub struct Jobs<'a, E> {
    /// Runs made at once (at least one).
    pub count: usize,
    /// Loads a model for one job.
    pub load: &'a (dyn Fn() -> Result<Box<dyn Model>, E> + Sync),
    /// Called as each run ends, with how many have ended so far (this one included).
    pub ended: &'a (dyn Fn(usize, &TaskOutcome) + Sync),
    /// The first call each run of a task named here is given, by task id (see
    /// [`crate::given_reads`]): the reading ceiling, a diagnostic. `None` for none.
    pub given_reads: Option<&'a HashMap<String, MadeCall>>,
}

/// Makes every run of `runs` (a task and the index of its phrasing), `jobs.count` at a time,
/// and returns their outcomes in the order of `runs`. A job that drew short tasks takes more;
/// a run's outcome does not depend on which job made it, as each starts a fresh conversation
/// on a fresh copy of its fixture. A model that cannot be loaded stops every job from taking
/// another run, and its error is returned.
pub fn run_all<E: Send>(
    runs: &[(&EvalTask, usize)],
    fixtures: &Path,
    toolbox: &Arc<Toolbox>,
    config: &AgentConfig,
    jobs: &Jobs<'_, E>,
) -> Result<Vec<TaskOutcome>, E> {
    let next = AtomicUsize::new(0);
    let ended = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<TaskOutcome>>> = runs.iter().map(|_| Mutex::new(None)).collect();
    let job = || -> Result<(), E> {
        // Whatever happens, the other jobs take no new run after a failed load.
        let mut model = (jobs.load)().inspect_err(|_| next.store(runs.len(), Ordering::SeqCst))?;
        loop {
            let at = next.fetch_add(1, Ordering::SeqCst);
            let Some(&(task, phrasing)) = runs.get(at) else {
                return Ok(());
            };
            let given = jobs
                .given_reads
                .and_then(|reads| reads.get(&task.id))
                .cloned();
            let outcome = match given {
                Some(call) => {
                    let mut wrapped = FirstCallGiven::new(model, call);
                    let outcome = run_task(task, phrasing, fixtures, toolbox, &mut wrapped, config);
                    model = wrapped.into_inner();
                    outcome
                }
                None => run_task(task, phrasing, fixtures, toolbox, model.as_mut(), config),
            };
            (jobs.ended)(ended.fetch_add(1, Ordering::SeqCst) + 1, &outcome);
            *slots[at].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        }
    };
    let count = jobs.count.clamp(1, runs.len().max(1));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..count).map(|_| scope.spawn(job)).collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect::<Result<Vec<()>, E>>()
    })?;
    Ok(slots
        .into_iter()
        .filter_map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect())
}
