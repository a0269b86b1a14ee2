package app

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/oauth"
)

// webhookDelivery builds both halves of webhook delivery: the event consumer that records deliveries in its
// own transaction of each event's dispatch and the deliverer the attempt jobs and the webhook handlers run.
// Both enqueue through the process's job inserter (inserts happen in the caller's transaction).
func webhookDelivery(cfg config.Config, pool *pgxpool.Pool, logger *slog.Logger, keyring *seal.Keyring, inserter delivery.Inserter) (*delivery.Consumer, *delivery.Deliverer) {
	consumer := delivery.NewConsumer(inserter, delivery.ConsumerOptions{})
	deliverer := delivery.NewDeliverer(pool, delivery.Options{
		Keyring: keyring, Apps: oauth.WebhookApps{Keyring: keyring}, Jobs: inserter, Logger: logger.With(slog.String("component", "webhooks")),
		Egress: egress.Options{AllowPrivate: cfg.WebhooksAllowPrivate},
	})
	return consumer, deliverer
}
