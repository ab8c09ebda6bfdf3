-- The lock table of quarkus-mysql-lock: fencing tokens of both engines, leases of the LEASE engine,
-- transaction-scoped row locks, run-once completions (LockManager.runOnce), and the last tick run of each @Locked
-- scheduled job (row tick@<lock name>, its fence holding the tick, its owner "<tick before> <tick>"). One row per lock
-- name; LockManager.purgeUnused removes unused rows and keeps the
-- highest removed fence in the row ~fence-floor, where new rows start, so fences never go back.
-- Times are the server's UTC_TIMESTAMP(6). Rename the table with quarkus.mysql-lock.lease.table (then copy this file
-- into your own migrations with that name).
-- A Flyway repeatable migration (add classpath:io/quarkiverse/mysqllock/schema to your locations), also run by
-- mysql-lock-changelog.xml beside it for Liquibase; the extension itself runs it when the table is missing and
-- quarkus.mysql-lock.lease.create-table is true.
-- The application user needs SELECT, INSERT, UPDATE on it (and DELETE for LockManager.purgeUnused).
CREATE TABLE IF NOT EXISTS mysql_lock (
  name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  owner VARCHAR(255) NULL,
  acquired_at DATETIME(6) NULL,
  expires_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00.000000',
  fence BIGINT NOT NULL DEFAULT 0,
  completed_at DATETIME(6) NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB;
