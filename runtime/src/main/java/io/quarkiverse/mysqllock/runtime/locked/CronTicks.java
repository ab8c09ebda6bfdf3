package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Instant;
import java.time.ZoneId;
import java.util.Locale;

import org.eclipse.microprofile.config.ConfigProvider;

import com.cronutils.model.CronType;
import com.cronutils.model.time.ExecutionTime;

import io.quarkiverse.mysqllock.runtime.jobs.JobSchedule;
import io.quarkus.scheduler.common.runtime.CronParser;
import io.quarkus.scheduler.common.runtime.util.SchedulerUtils;

/**
 * A cron job's ticks, as Quarkus' scheduler computes its fire times (cron-utils, {@code quarkus.scheduler.cron-type}).
 * A class of its own so that the scheduler (an optional dependency) is only loaded by applications with a cron job that
 * catches up.
 */
final class CronTicks {

    private CronTicks() {
    }

    /**
     * The schedule of {@code @Scheduled(cron, timeZone)} as written (config expressions resolved now); null when it is
     * off.
     *
     * @throws IllegalArgumentException when the expression does not parse
     */
    static JobSchedule of(String cron, String timeZone) {
        String expression = SchedulerUtils.lookUpPropertyValue(cron).trim();
        if (expression.isEmpty() || SchedulerUtils.isOff(expression)) {
            return null;
        }
        String zoneText = timeZone.isEmpty() ? "" : SchedulerUtils.lookUpPropertyValue(timeZone).trim();
        ZoneId zone = zoneText.isEmpty() ? ZoneId.systemDefault() : ZoneId.of(zoneText);
        CronType type = CronType.valueOf(ConfigProvider.getConfig()
                .getOptionalValue("quarkus.scheduler.cron-type", String.class).orElse("quartz")
                .toUpperCase(Locale.ROOT));
        ExecutionTime times = ExecutionTime.forCron(new CronParser(type).parse(expression));
        return JobSchedule.before(time -> times.lastExecution(Instant.ofEpochMilli(time).atZone(zone))
                .map(last -> last.toInstant().toEpochMilli()).filter(last -> last < time).orElse(Long.MIN_VALUE));
    }
}
