-- The run history of quarkus-mysql-lock's scheduled jobs: one row per run, and per tick skipped or queued because the
-- job's lock was busy, or skipped because the job was paused. name is the job's row in the jobs table; tick the scheduled fire time it ran for
-- (epoch milliseconds); kind SCHEDULED, CATCH_UP, RUN_NOW or QUEUED; outcome RUNNING (started, not yet ended: if its
-- instance died, it stays so), SUCCEEDED, FAILED, LOST (its lock was lost while it ran), CANCELLED, SKIPPED_BUSY,
-- NOT_ACQUIRED, SKIPPED_PAUSED or QUEUED (fired while a run lasted: one QUEUED run follows it); instance the holder identity of the instance that ran it; the error's class and first line for a run
-- that threw. Ordered by started_at (ids interleave between Galera nodes).
-- Named after the lock table with _run after it: with quarkus.mysql-lock.table=app_locks, app_locks_run (then copy
-- this file into your own migrations with that name).
-- A Flyway repeatable migration (add classpath:io/quarkiverse/mysqllock/schema to your locations), also run by
-- mysql-lock-changelog.xml beside it for Liquibase; the extension itself runs it at a job's first run when the table is
-- missing and quarkus.mysql-lock.create-table is true.
-- The application user needs SELECT, INSERT, UPDATE, DELETE on it: each job's old rows are removed as
-- quarkus.mysql-lock.job-history.keep-runs and keep-for say.
CREATE TABLE IF NOT EXISTS mysql_lock_run (
  id BIGINT NOT NULL AUTO_INCREMENT,
  name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  tick BIGINT NOT NULL,
  kind VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  outcome VARCHAR(24) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  instance VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  started_at DATETIME(6) NOT NULL,
  ended_at DATETIME(6) NULL,
  error_class VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  error_message VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  PRIMARY KEY (id),
  KEY job_started (name, started_at)
) ENGINE=InnoDB;
