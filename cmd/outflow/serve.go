package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/outflowhq/outflow/cmd/outflow/app"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// role is what one `outflow serve` process runs; API and worker processes scale out independently against
// one database.
type role string

const (
	roleAPI    role = "api"
	roleWorker role = "worker"
	roleAll    role = "all"
)

func parseRole(s string) (role, error) {
	switch r := role(s); r {
	case roleAPI, roleWorker, roleAll:
		return r, nil
	}
	return "", fmt.Errorf("--role %q must be api, worker or all", s)
}

func (r role) api() bool    { return r != roleWorker }
func (r role) worker() bool { return r != roleAPI }

// serve runs until ctx is canceled, then shuts down in order: stop accepting and finish in-flight requests,
// then the app's own order (app.App.Close: realtime, usage log, workers, pool). listening, when set, is told
// the bound address (tests listen on port 0).
func serve(ctx context.Context, cfg config.Config, r role, logger *slog.Logger, listening func(net.Addr)) (runErr error) {
	if err := cfg.RequireSecretKey(); err != nil {
		return err
	}
	if err := db.Migrate(ctx, cfg.DatabaseURL, logger); err != nil {
		return err
	}
	a, err := app.New(ctx, cfg, logger, app.Options{API: r.api(), Work: r.worker()})
	if err != nil {
		return err
	}
	shutdownCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	}
	if err := a.Start(ctx); err != nil {
		sctx, cancel := shutdownCtx()
		defer cancel()
		return errors.Join(err, a.Close(sctx))
	}

	var httpServer *http.Server
	serveErr := make(chan error, 1)
	if r.api() {
		ln, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			sctx, cancel := shutdownCtx()
			defer cancel()
			return errors.Join(fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err), a.Close(sctx))
		}
		httpServer = &http.Server{
			Handler:           a.Handler,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       time.Minute,
			WriteTimeout:      90 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		}
		go func() { serveErr <- httpServer.Serve(ln) }()
		logger.InfoContext(ctx, "serving", slog.String("addr", ln.Addr().String()), slog.String("api", "http://"+ln.Addr().String()+app.APIPrefix),
			slog.String("role", string(r)), slog.String("version", version))
		if listening != nil {
			listening(ln.Addr())
		}
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("http server: %w", err)
	}
	logger.Info("shutting down", slog.Duration("timeout", cfg.ShutdownTimeout))
	sctx, cancel := shutdownCtx()
	defer cancel()
	if httpServer != nil {
		if err := httpServer.Shutdown(sctx); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("http shutdown: %w", err))
		}
	}
	runErr = errors.Join(runErr, a.Close(sctx))
	logger.Info("stopped")
	return runErr
}
