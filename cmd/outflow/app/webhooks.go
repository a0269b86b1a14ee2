package app

import (
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/jobs"
	"github.com/outflowhq/outflow/oauth"
)

// webhookDelivery builds both halves of webhook delivery: the event consumer that records deliveries in the
// dispatch transaction and the deliverer the attempt jobs run. Both enqueue through an insert-only River
// client of their own (inserts happen in the caller's transaction), which the process's client cannot be: it
// is built from them.
func webhookDelivery(cfg config.Config, pool *pgxpool.Pool, logger *slog.Logger) (*delivery.Consumer, *delivery.Deliverer, error) {
	keyring, err := seal.NewKeyring(append([][]byte{cfg.SecretKey}, cfg.PreviousSecretKeys...)...)
	if err != nil {
		return nil, nil, err
	}
	inserter, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: logger}, jobs.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("build webhook job inserter: %w", err)
	}
	consumer := delivery.NewConsumer(inserter, delivery.ConsumerOptions{})
	deliverer := delivery.NewDeliverer(pool, delivery.Options{
		Keyring: keyring, Apps: oauth.WebhookApps{Keyring: keyring}, Jobs: inserter, Logger: logger.With(slog.String("component", "webhooks")),
		Egress: egress.Options{AllowPrivate: cfg.WebhooksAllowPrivate},
	})
	return consumer, deliverer, nil
}
