-- The audit trail of quarkus-mysql-lock: one row per change made to the fleet from outside its scheduled work (a
-- scheduled job paused, resumed, disabled, enabled or run now; a lock released by force from the admin resource or the
-- Dev UI), by whom, when and why. action names the change (PAUSE, RESUME, DISABLE, ENABLE, RUN_NOW, FORCE_RELEASE);
-- target_key is the job's or lock's name on the server, target the name as the application wrote it; actor who asked
-- (as the caller said, or the authenticated user of the admin resource); reason why, as they said; instance the holder
-- identity of the instance that made the change; detail what it changed (a job's state before and after).
-- Rows are only ever added; delete old ones by hand when you no longer need them.
-- Named after the lock table with _audit after it: with quarkus.mysql-lock.table=app_locks, app_locks_audit (then copy
-- this file into your own migrations with that name).
-- A Flyway repeatable migration (add classpath:io/quarkiverse/mysqllock/schema to your locations), also run by
-- mysql-lock-changelog.xml beside it for Liquibase; the extension itself runs it at the first change when the table is
-- missing and quarkus.mysql-lock.create-table is true.
-- The application user needs SELECT, INSERT on it.
CREATE TABLE IF NOT EXISTS mysql_lock_audit (
  id BIGINT NOT NULL AUTO_INCREMENT,
  at DATETIME(6) NOT NULL,
  action VARCHAR(24) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  target_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  target VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  actor VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  reason VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  instance VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  detail VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  PRIMARY KEY (id),
  KEY target_at (target_key, at)
) ENGINE=InnoDB;
