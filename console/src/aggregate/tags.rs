//! Shard tags: a per-namespace list the console reads itself (schedules,
//! from `registry.rs`), concatenated with each row marked with the shard
//! it came from, for display. Each stored schedule is its own row: one of
//! the same name on two shards is two schedules, each firing. Workers,
//! which one process may register on every shard, are merged instead
//! (`workers.rs`). Everything else the console shows comes from the
//! driver's `redq::Operator`.

use futures::future::try_join_all;
use redq::QueueError;

use super::Target;
use crate::tui::state::ScheduleInfo;

impl Target {
    /// Schedules of every shard, by name.
    pub async fn schedules(&self) -> Result<Option<Vec<ScheduleInfo>>, QueueError> {
        let all = try_join_all(self.shards().iter().map(crate::registry::schedules)).await?;
        Ok(self
            .tagged(all, |s: &mut ScheduleInfo, shard| s.shard = shard)
            .map(|mut schedules| {
                schedules.sort_by(|a, b| a.name.cmp(&b.name).then(a.shard.cmp(&b.shard)));
                schedules
            }))
    }

    /// Concatenate per-shard lists, marking each item with its shard when
    /// there are several; `None` if no shard reports the list at all.
    fn tagged<T>(
        &self,
        per_shard: Vec<Option<Vec<T>>>,
        mut mark: impl FnMut(&mut T, Option<usize>),
    ) -> Option<Vec<T>> {
        let sharded = self.is_sharded();
        let mut out: Option<Vec<T>> = None;
        for (i, items) in per_shard.into_iter().enumerate() {
            let Some(items) = items else { continue };
            let list = out.get_or_insert_with(Vec::new);
            for mut item in items {
                mark(&mut item, sharded.then_some(i));
                list.push(item);
            }
        }
        out
    }
}
