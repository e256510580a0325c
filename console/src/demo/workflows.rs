//! The demo's workflows, enqueued once at start so the Workflows screen
//! (8) has one of each to show: a batch of webhook deliveries with both
//! callbacks (some deliveries die, so `on_success` is often cancelled), a
//! small tree (an album mail waiting for its thumbnails), and a receipt
//! that waits for a charge and is held for an operator if it fails.

use redq::workflow::{Batch, OnFailure, Tree};
use redq::{NewJob, QueueError, RedisQueue};

use super::traffic::{ChargeInvoice, DeliverWebhook, RenderThumbnail, SendEmail, TENANTS};
use redq::worker::TypedJob;

fn mail(template: &str) -> SendEmail {
    SendEmail {
        to: "ops@example.com".into(),
        template: template.into(),
    }
}

/// Enqueue the three workflows.
pub(super) async fn seed(queue: &RedisQueue) -> Result<(), QueueError> {
    let mut batch = Batch::new().label("order.created fan-out");
    for order in 0..6u64 {
        let tenant = TENANTS[order as usize % TENANTS.len()];
        batch = batch.typed_job(&DeliverWebhook {
            tenant: tenant.into(),
            url: format!("https://hooks.example.com/{tenant}"),
            event: "order.created".into(),
            order: 9_000 + order,
        });
    }
    let batch = batch
        .typed_on_complete(&mail("fanout_report"))
        .typed_on_success(&mail("fanout_all_delivered"));
    queue.enqueue_batch(batch).await?;

    let mut tree = Tree::typed(&mail("album_ready"));
    for n in 0..3 {
        tree = tree.typed_child(&RenderThumbnail {
            image: format!("s3://albums/summer/{n:03}.jpg"),
            sizes: vec![256, 1024],
        });
    }
    queue.add_tree(tree).await?;

    let charge = queue
        .push(&ChargeInvoice {
            customer: "cus_4".into(),
            invoice: "in_demo01".into(),
            amount_cents: 12_900,
        })
        .await?;
    let receipt = serde_json::to_value(mail("receipt_in_demo01")).unwrap_or_default();
    let receipt = NewJob::new(receipt)
        .name(SendEmail::NAME)
        .max_attempts(SendEmail::MAX_ATTEMPTS)
        .after([charge.id()])
        .on_dependency_failure(OnFailure::Hold);
    queue.add(SendEmail::QUEUE, receipt).await?;
    Ok(())
}
