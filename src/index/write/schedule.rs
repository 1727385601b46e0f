//! The batch's scheduler: a parallel step's items taken one at a time by whoever is free — rayon's
//! workers, and the writer once it has inserted its window — so the writer never idles while
//! work is left.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// A parallel step's items, taken one at a time by whoever is free: rayon's workers, and the
/// writer once it has inserted its window (so that it never idles while work is left).
pub(super) trait Job: Send + Sync {
    /// Takes and does items until none is left.
    fn work(&self);
}

/// The items of one step: `f(i)` for `i` in `0..slots.len()`.
struct Items<T, F> {
    pub(crate) f: F,
    pub(crate) next: AtomicUsize,
    /// Results (`None` for an item whose work panicked).
    pub(crate) slots: Vec<Mutex<Option<T>>>,
    pub(crate) done: Mutex<usize>,
    pub(crate) all_done: Condvar,
}

impl<T: Send, F: Fn(usize) -> T + Send + Sync> Job for Items<T, F> {
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = self.slots.get(i) else {
                return;
            };
            // A panicking item is recorded as missing, so that the step still ends.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                crate::quiet::within(|| (self.f)(i))
            }));
            *slot.lock() = r.ok();
            let mut done = self.done.lock();
            *done += 1;
            if *done == self.slots.len() {
                self.all_done.notify_all();
            }
        }
    }
}

/// Where the background step posts the job it is running, for the writer to help with.
#[derive(Default)]
pub(super) struct Board<'env> {
    /// A counter of posts and the job posted last.
    job: Mutex<(u64, Option<Arc<dyn Job + 'env>>)>,
    changed: Condvar,
}

impl<'env> Board<'env> {
    /// `f` over `0..n` on rayon's pool, in order; the calling thread takes items too when
    /// `here` (the writer's own first window), and the writer may (see [`Board::help`]). `None`
    /// for an item whose work panicked.
    pub(super) fn map<T, F>(&self, n: usize, here: bool, f: F) -> Vec<Option<T>>
    where
        T: Send + 'env,
        F: Fn(usize) -> T + Sync + Send + 'env,
    {
        let job = Arc::new(Items {
            f,
            next: AtomicUsize::new(0),
            slots: (0..n).map(|_| Mutex::new(None)).collect(),
            done: Mutex::new(0),
            all_done: Condvar::new(),
        });
        self.post(Some(job.clone()));
        rayon::in_place_scope(|s| {
            for _ in 0..rayon::current_num_threads() {
                let job = &job;
                s.spawn(move |_| job.work());
            }
            if here {
                job.work();
            }
        });
        let mut done = job.done.lock();
        while *done < n {
            job.all_done.wait(&mut done);
        }
        drop(done);
        self.post(None);
        job.slots.iter().map(|s| s.lock().take()).collect()
    }

    pub(crate) fn post(&self, job: Option<Arc<dyn Job + 'env>>) {
        let mut g = self.job.lock();
        g.0 += 1;
        g.1 = job;
        self.changed.notify_all();
    }

    /// The writer takes items of the posted jobs until `finished()`.
    pub(super) fn help(&self, finished: impl Fn() -> bool) {
        while !finished() {
            let (seen, job) = {
                let g = self.job.lock();
                (g.0, g.1.clone())
            };
            if let Some(job) = job {
                job.work();
            }
            // A writer that is itself one of rayon's workers runs pool jobs meanwhile: the
            // background step may wait for jobs queued behind it.
            if rayon::current_thread_index().is_some()
                && rayon::yield_now() == Some(rayon::Yield::Executed)
            {
                continue;
            }
            let mut g = self.job.lock();
            if g.0 == seen {
                // Nothing new yet: wait for the next job, or look again shortly (the step may
                // be between jobs or just ending).
                self.changed.wait_for(&mut g, Duration::from_millis(1));
            }
        }
    }
}
