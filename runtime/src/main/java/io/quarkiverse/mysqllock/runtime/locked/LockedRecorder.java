package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkus.runtime.RuntimeValue;
import io.quarkus.runtime.annotations.Recorder;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.config.SmallRyeConfig;

/**
 * Builds the {@link LockedMethods} table at static init from what the build decided for each {@code @Locked} method:
 * a table, one {@link #add} per method, then the table as the value of the synthetic bean.
 */
@Recorder
public class LockedRecorder {

    /** An empty table, filled by {@link #add} and then handed to {@link #lockedMethods}. */
    public RuntimeValue<Map<String, LockedMethod>> newTable() {
        return new RuntimeValue<>(new HashMap<>());
    }

    /**
     * @param key the method's {@link LockedMethodKey}
     * @param resolver an instance of a generated {@link LockNameResolver}, or null when the name is fixed
     */
    public void add(RuntimeValue<Map<String, LockedMethod>> table, String key, String fixedName,
            RuntimeValue<LockNameResolver> resolver, String waitFor, OnBusy onBusy, String atLeastFor, String atMostFor,
            Locked.Mode mode, int permits, ReturnKind kind, String description, int tickParameter,
            boolean interruptOnLoss, int handleParameter, String every, String cron, String timeZone, String dataSource) {
        LockedMethod.Durations durations = new LockedMethod.Durations(waitFor, atLeastFor, atMostFor, interruptOnLoss,
                every);
        table.getValue().put(key, new LockedMethod(fixedName, resolver == null ? null : resolver.getValue(), durations,
                onBusy, mode, permits, kind, description, LockedMethodKey.withoutParameters(key), tickParameter,
                handleParameter, dataSource, cron.isEmpty() ? null : new LockedMethod.Cron(cron, timeZone)));
    }

    /**
     * Resolves the {@code ${...}} config expressions of the methods' durations, at start: the application does not start
     * if one cannot be resolved or asks for what {@code LockOptions} refuses, each method's error named.
     */
    public void resolveExpressions(RuntimeValue<Map<String, LockedMethod>> table) {
        Config config = ConfigProvider.getConfig();
        List<String> errors = new ArrayList<>();
        for (LockedMethod method : table.getValue().values()) {
            try {
                method.resolve(property -> config.getOptionalValue(property, String.class));
            } catch (IllegalArgumentException e) {
                errors.add(e.getMessage());
            }
        }
        if (!errors.isEmpty()) {
            throw new ConfigurationException("Invalid @Locked durations:\n- " + String.join("\n- ", errors));
        }
    }

    /**
     * A job's settings ({@code quarkus.mysql-lock.jobs."job-name".*}) under a name that is no job of this application
     * would never apply (an alert that never fires): the start fails, before the scheduler fires anything, naming the
     * keys and the jobs there are. With a job whose lock's name is built from its parameters, any name may be one. Each
     * job's missed-ticks policy is set, and the start fails when a job cannot catch up as its settings ask.
     */
    public void checkJobSettings(RuntimeValue<Map<String, LockedMethod>> table) {
        LockedMethods methods = new LockedMethods(table.getValue());
        List<String> jobs = methods.jobNames();
        Map<String, MySqlLockRuntimeConfig.JobSettings> settings = ConfigProvider.getConfig()
                .unwrap(SmallRyeConfig.class).getConfigMapping(MySqlLockRuntimeConfig.class).jobs();
        List<String> unknown = settings.keySet().stream().filter(name -> !jobs.contains(name)).sorted().toList();
        if (!unknown.isEmpty() && !methods.hasJobNameTemplates()) {
            throw new ConfigurationException(unknown.stream().map(name -> "quarkus.mysql-lock.jobs.\"" + name + "\"")
                    .toList() + " name no scheduled job of this application (a @Locked method with a ScheduledExecution"
                    + " parameter, by its lock's name): its jobs are " + jobs);
        }
        List<String> errors = new ArrayList<>();
        settings.forEach((name, job) -> errors.addAll(JobCatchUps.check(name, job,
                table.getValue().values().stream().filter(method -> name.equals(method.jobName())).toList())));
        if (!errors.isEmpty()) {
            throw new ConfigurationException("Invalid settings of scheduled jobs:\n- " + String.join("\n- ", errors));
        }
    }

    /**
     * The {@link LeaderMethods} bean: each {@code @WhileLeader} method as {@code role}, {@code class#method} and its
     * {@link LeaderMethod.Parameter}, in the same order.
     */
    public RuntimeValue<LeaderMethods> leaderMethods(List<String> roles, List<String> classes, List<String> methodNames,
            List<LeaderMethod.Parameter> parameters) {
        List<LeaderMethod> methods = new ArrayList<>();
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        for (int i = 0; i < roles.size(); i++) {
            try {
                Class<?> beanClass = Class.forName(classes.get(i), false, loader);
                Method method = switch (parameters.get(i)) {
                    case NONE -> beanClass.getDeclaredMethod(methodNames.get(i));
                    case TERM -> beanClass.getDeclaredMethod(methodNames.get(i), long.class);
                    case GRANT -> beanClass.getDeclaredMethod(methodNames.get(i), LeadershipGranted.class);
                };
                method.setAccessible(true);
                methods.add(new LeaderMethod(roles.get(i), beanClass, method, parameters.get(i)));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("@WhileLeader method " + classes.get(i) + "#" + methodNames.get(i)
                        + " could not be found", e);
            }
        }
        return new RuntimeValue<>(new LeaderMethods(methods));
    }

    /** The value of the {@link LockedMethods} bean. */
    public RuntimeValue<LockedMethods> lockedMethods(RuntimeValue<Map<String, LockedMethod>> table) {
        return new RuntimeValue<>(new LockedMethods(table.getValue()));
    }

    /** The lock names of the {@code @Fenced} methods, filled by {@link #addFenced}. */
    public RuntimeValue<Map<String, FencedMethods.FencedMethod>> newFencedTable() {
        return new RuntimeValue<>(new HashMap<>());
    }

    /**
     * A {@code @Fenced} method's lock: written out, or built by {@code resolver} (null when written out); its tokens in
     * the lock table of {@code dataSource} (null: the lock datasource).
     */
    public void addFenced(RuntimeValue<Map<String, FencedMethods.FencedMethod>> table, String key, String fixedName,
            RuntimeValue<LockNameResolver> resolver, String dataSource) {
        table.getValue().put(key, new FencedMethods.FencedMethod(fixedName, resolver == null ? null : resolver.getValue(),
                dataSource));
    }

    public RuntimeValue<FencedMethods> fencedMethods(RuntimeValue<Map<String, FencedMethods.FencedMethod>> table) {
        return new RuntimeValue<>(new FencedMethods(table.getValue()));
    }
}
