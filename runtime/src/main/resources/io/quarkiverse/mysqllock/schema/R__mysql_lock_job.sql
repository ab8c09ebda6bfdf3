-- The jobs table of quarkus-mysql-lock: one row per scheduled job (an exclusive @Locked method with a
-- ScheduledExecution parameter), keyed by its lock's name on the server; job is the name as the application wrote it.
-- A tick is claimed here by one conditional UPDATE, so that it runs on one instance of the fleet: latest_tick is the
-- latest scheduled fire time claimed (epoch milliseconds), settled_tick the mark below which no late tick runs,
-- fired_tick the latest tick claimed whether it ran or was given back (the lock busy), claim_seen what the latest claim
-- found (read back through LAST_INSERT_ID). state is the job's state for the whole
-- fleet: ACTIVE, PAUSED or DISABLED (a tick is claimed in every state, and runs only while ACTIVE). A job that catches
-- up keeps the ticks no instance ran, to catch up: those after catch_up_from up to catch_up_to (0: none), and a
-- next range apart from them (ticks ran between the two) in next_catch_up_from and next_catch_up_to. A job that
-- queues one run keeps in queued_tick the latest tick that fired while a run lasted (0: none). The other
-- columns keep what the fleet last saw of the job: its schedule, its next fire time, its last run, the last change of
-- its state.
-- Times are the server's UTC_TIMESTAMP(6).
-- Named after the lock table with _job after it: with quarkus.mysql-lock.table=app_locks, app_locks_job (then copy
-- this file into your own migrations with that name).
-- A Flyway repeatable migration (add classpath:io/quarkiverse/mysqllock/schema to your locations), also run by
-- mysql-lock-changelog.xml beside it for Liquibase; the extension itself runs it at a job's first tick when the table is
-- missing and quarkus.mysql-lock.create-table is true.
-- The application user needs SELECT, INSERT, UPDATE on it. A table created by an earlier build lacks the newer columns:
-- the first claim of a tick says which, with the ALTER TABLE that adds them.
CREATE TABLE IF NOT EXISTS mysql_lock_job (
  name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  job VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  state VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'ACTIVE',
  latest_tick BIGINT NOT NULL DEFAULT 0,
  settled_tick BIGINT NOT NULL DEFAULT 0,
  fired_tick BIGINT NOT NULL DEFAULT 0,
  claim_seen BIGINT NOT NULL DEFAULT 0,
  catch_up_from BIGINT NOT NULL DEFAULT 0,
  catch_up_to BIGINT NOT NULL DEFAULT 0,
  next_catch_up_from BIGINT NOT NULL DEFAULT 0,
  next_catch_up_to BIGINT NOT NULL DEFAULT 0,
  queued_tick BIGINT NOT NULL DEFAULT 0,
  schedule VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  next_fire_at DATETIME(6) NULL,
  last_outcome VARCHAR(24) CHARACTER SET ascii COLLATE ascii_bin NULL,
  last_started_at DATETIME(6) NULL,
  last_ended_at DATETIME(6) NULL,
  last_success_at DATETIME(6) NULL,
  last_failure_at DATETIME(6) NULL,
  changed_at DATETIME(6) NULL,
  changed_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  created_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00.000000',
  PRIMARY KEY (name)
) ENGINE=InnoDB;
