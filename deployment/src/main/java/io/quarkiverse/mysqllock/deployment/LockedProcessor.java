package io.quarkiverse.mysqllock.deployment;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.runtime.locked.DataSourceManagers;
import io.quarkiverse.mysqllock.runtime.locked.JobLaunches;
import io.quarkiverse.mysqllock.runtime.locked.LockNameResolver;
import io.quarkiverse.mysqllock.runtime.locked.LockedInterceptor;
import io.quarkiverse.mysqllock.runtime.locked.LockedMethod;
import io.quarkiverse.mysqllock.runtime.locked.LockedMethods;
import io.quarkiverse.mysqllock.runtime.locked.LockedRecorder;
import io.quarkiverse.mysqllock.runtime.locked.Suspending;
import io.quarkus.agroal.spi.JdbcDataSourceBuildItem;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.SyntheticBeanBuildItem;
import io.quarkus.arc.deployment.UnremovableBeanBuildItem;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.GeneratedClassBuildItem;
import io.quarkus.deployment.builditem.LaunchModeBuildItem;
import io.quarkus.deployment.builditem.RemovedResourceBuildItem;
import io.quarkus.deployment.builditem.ServiceStartBuildItem;
import io.quarkus.deployment.builditem.nativeimage.ReflectiveClassBuildItem;
import io.quarkus.deployment.builditem.nativeimage.ReflectiveMethodBuildItem;
import io.quarkus.deployment.builditem.nativeimage.RuntimeInitializedClassBuildItem;
import io.quarkus.deployment.pkg.builditem.CurateOutcomeBuildItem;
import io.quarkus.deployment.recording.RecorderContext;
import io.quarkus.maven.dependency.ResolvedDependency;
import io.quarkus.runtime.RuntimeValue;

/**
 * The build steps of {@code @Locked}: scan the index for the methods, check them all (failing the build once, with
 * every misuse), generate the lock name resolvers of templated names, and record the table of methods as the
 * {@link LockedMethods} bean that the interceptor injects.
 */
class LockedProcessor {

    private static final Logger LOG = Logger.getLogger(LockedProcessor.class);

    @BuildStep
    AdditionalBeanBuildItem interceptor() {
        return AdditionalBeanBuildItem.builder().addBeanClasses(LockedInterceptor.class, DataSourceManagers.class)
                .setUnremovable().build();
    }

    /**
     * A scheduled job can be run outside its schedule ({@code FleetJobs.runNow}), where the application has jobs: its
     * method is called by reflection ({@code JobLaunches}), registered for a native image, on its bean, which stays
     * even where nothing injects it.
     */
    @BuildStep
    void launchableJobs(List<LockedMethodBuildItem> found, List<CheckedLockedMethodBuildItem> checked,
            BuildProducer<ReflectiveMethodBuildItem> reflective, BuildProducer<UnremovableBeanBuildItem> unremovable,
            BuildProducer<AdditionalBeanBuildItem> beans) {
        Set<String> jobs = new TreeSet<>();
        checked.stream().filter(method -> method.tickParameter >= 0).forEach(method -> jobs.add(method.key));
        if (jobs.isEmpty()) {
            return; // and the scheduler API, which JobLaunches names, may be missing
        }
        beans.produce(AdditionalBeanBuildItem.unremovableOf(JobLaunches.class));
        for (LockedMethodBuildItem method : found) {
            if (jobs.contains(method.key()) && method.method().parametersCount() == 1) {
                reflective.produce(new ReflectiveMethodBuildItem("run-now of a scheduled job", method.method()));
                unremovable.produce(UnremovableBeanBuildItem.beanTypes(method.method().declaringClass().name()));
            }
        }
    }

    /**
     * Kotlin {@code suspend} functions are run by a class that names Kotlin's types, loaded by name: registered (for a
     * native image) only where the application has such a function, and so Kotlin; anywhere else it is left out of the
     * application, since a native build would otherwise link it (it folds the holder's {@code Class.forName}) and fail
     * on the missing Kotlin types. The holder that loads it is always initialised at run time: initialised at build
     * time, it would load the class there.
     */
    @BuildStep
    void suspendSupport(List<CheckedLockedMethodBuildItem> checkedMethods, CurateOutcomeBuildItem curate,
            BuildProducer<ReflectiveClassBuildItem> reflective,
            BuildProducer<RuntimeInitializedClassBuildItem> runtimeInitialized,
            BuildProducer<RemovedResourceBuildItem> removed) {
        runtimeInitialized.produce(new RuntimeInitializedClassBuildItem(Suspending.Holder.class.getName()));
        if (checkedMethods.stream().anyMatch(method -> method.kind.suspends())) {
            reflective.produce(ReflectiveClassBuildItem.builder(Suspending.IMPLEMENTATION).constructors().build());
            return;
        }
        String prefix = Suspending.IMPLEMENTATION.replace('.', '/');
        for (ResolvedDependency dependency : curate.getApplicationModel().getRuntimeDependencies()) {
            if (!dependency.getContentTree().contains(prefix + ".class")) {
                continue;
            }
            Set<String> classes = new TreeSet<>();
            dependency.getContentTree().walk(visit -> {
                String path = visit.getRelativePath("/");
                if (path.equals(prefix + ".class") || path.startsWith(prefix + "$") && path.endsWith(".class")) {
                    classes.add(path);
                }
            });
            removed.produce(new RemovedResourceBuildItem(dependency.getKey(), classes));
            return;
        }
        LOG.debugf("%s is in no dependency of the application: nothing to leave out", Suspending.IMPLEMENTATION);
    }

    /** Every method a {@code @Locked} annotation applies to, in key order. */
    @BuildStep
    void scan(CombinedIndexBuildItem combinedIndex, BuildProducer<LockedMethodBuildItem> lockedMethods) {
        lockedMethods.produce(LockedMethodScanner.scan(combinedIndex.getIndex()));
    }

    /** Checks and parses every method; fails the build with all the misuses at once. */
    @BuildStep
    void validate(CombinedIndexBuildItem combinedIndex, List<LockedMethodBuildItem> lockedMethods,
            LockDataSourceBuildItem lockDataSource, List<JdbcDataSourceBuildItem> dataSources,
            BuildProducer<CheckedLockedMethodBuildItem> checkedMethods) {
        // in-memory mode (tests, dev) has one manager, which serves every datasource's methods: the names are checked
        // against what production has
        Set<String> managed = LockDataSourceBuildItem.managed(lockDataSource.name(), dataSources, false);
        List<LockedMethodBuildItem> found = byKey(lockedMethods, LockedMethodBuildItem::key);
        List<String> errors = new ArrayList<>();
        List<LockedMethodBuildItem> interceptable = new ArrayList<>();
        for (LockedMethodBuildItem method : found) {
            String notInterceptable = LockedMethodCheck.notInterceptable(method.method());
            if (notInterceptable != null) {
                errors.add(notInterceptable);
            } else {
                interceptable.add(method);
            }
        }
        List<CheckedLockedMethodBuildItem> checked = new ArrayList<>();
        for (LockedMethodBuildItem method : interceptable) {
            CheckedLockedMethodBuildItem valid = LockedMethodCheck.check(combinedIndex.getIndex(), method, errors);
            if (valid == null) {
                continue;
            }
            if (!valid.dataSource.isEmpty() && !managed.contains(valid.dataSource)) {
                errors.add(valid.description + ": datasource = \"" + valid.dataSource + "\" is not a MySQL or MariaDB"
                        + " datasource of the application (they are: " + String.join(", ", managed) + "). Name one of"
                        + " them, or leave datasource out for the lock datasource");
                continue;
            }
            if (LockedMethodCheck.untrackedSchedule(method.method(), valid)) {
                LOG.warnf("%s is @Scheduled and @Locked without a ScheduledExecution parameter: an instance whose"
                        + " trigger fires late can run a tick again once the lock is free. Add a ScheduledExecution"
                        + " parameter and each tick runs at most once across the cluster",
                        valid.description);
            }
            if (LockedMethodCheck.implicitlyNamedSchedule(method.method(), method.annotation())) {
                LOG.warnf("%s is @Scheduled and its lock has no name of its own: it is named after the class and the"
                        + " method, which change when the code moves, and then the old and the new instances of a"
                        + " rolling deploy do not exclude each other. Give it its present name, which stays when the"
                        + " code moves and is unique to this job: @Locked(\"%s\")", valid.description,
                        method.method().declaringClass().name() + "#" + method.method().name());
            }
            checked.add(valid);
        }
        samePermits(checked, errors);
        if (!errors.isEmpty()) {
            throw new DeploymentException("Invalid @Locked usage:\n- " + String.join("\n- ", errors));
        }
        checkedMethods.produce(checked);
    }

    /**
     * Every {@code mode = PERMIT} method of one fixed name says the same number of permits: a semaphore's permits are
     * one number for every user (the first stored wins, and the others are told so only at run time).
     */
    private static void samePermits(List<CheckedLockedMethodBuildItem> checked, List<String> errors) {
        Map<String, List<CheckedLockedMethodBuildItem>> byName = new TreeMap<>();
        for (CheckedLockedMethodBuildItem method : checked) {
            if (method.mode == Locked.Mode.PERMIT && method.fixedName != null) {
                byName.computeIfAbsent(method.fixedName, name -> new ArrayList<>()).add(method);
            }
        }
        byName.forEach((name, methods) -> {
            if (methods.stream().map(method -> method.permits).distinct().count() > 1) {
                errors.add("the semaphore '" + name + "' is given different numbers of permits: " + methods.stream()
                        .map(method -> method.description + " " + method.permits).toList()
                        + ". Every use of a semaphore must give the same number");
            }
        });
    }

    /** A resolver class for each method whose lock name has placeholders. */
    @BuildStep
    void generateResolvers(List<CheckedLockedMethodBuildItem> checkedMethods,
            BuildProducer<GeneratedClassBuildItem> generatedClasses) {
        for (CheckedLockedMethodBuildItem method : byKey(checkedMethods, item -> item.key)) {
            if (method.resolverClassName != null) {
                LockNameResolverGenerator.generate(generatedClasses, method.resolverClassName, method.segments,
                        method.placeholders);
            }
        }
    }

    /** The table of methods, in key order (reproducible bytecode), as a {@code @Singleton} bean. */
    @BuildStep
    @Record(ExecutionTime.STATIC_INIT)
    SyntheticBeanBuildItem recordTable(List<CheckedLockedMethodBuildItem> checkedMethods, LockedRecorder recorder,
            RecorderContext recorderContext, LockDataSourceBuildItem lockDataSource, LaunchModeBuildItem launchMode,
            BuildProducer<LockedTableBuildItem> recorded) {
        boolean inMemory = lockDataSource.inMemory();
        RuntimeValue<Map<String, LockedMethod>> table = recorder.newTable();
        boolean expressions = false;
        for (CheckedLockedMethodBuildItem method : byKey(checkedMethods, item -> item.key)) {
            expressions |= new LockedMethod.Durations(method.wait, method.atLeastFor, method.atMostFor, false,
                    method.every).expressions();
            RuntimeValue<LockNameResolver> resolver = null;
            if (method.resolverClassName != null) {
                resolver = recorderContext.newInstance(method.resolverClassName);
            }
            recorder.add(table, method.key, method.fixedName, resolver, method.wait, method.onBusy,
                    method.atLeastFor, method.atMostFor, method.mode, method.permits, method.kind,
                    method.description, method.tickParameter, method.interruptOnLoss, method.handleParameter, method.every,
                    method.cron, method.timeZone,
                    inMemory || method.dataSource.isEmpty() || method.dataSource.equals(lockDataSource.name()) ? null
                            : method.dataSource);
        }
        recorded.produce(new LockedTableBuildItem(table, expressions));
        return SyntheticBeanBuildItem.configure(LockedMethods.class)
                .scope(Singleton.class)
                .unremovable()
                .runtimeValue(recorder.lockedMethods(table))
                .done();
    }

    /** The {@code ${...}} expressions of the methods' durations, resolved from the configuration at start. */
    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    ServiceStartBuildItem resolveExpressions(LockedTableBuildItem recorded, LockedRecorder recorder) {
        if (recorded.expressions) {
            recorder.resolveExpressions(recorded.table);
        }
        recorder.checkJobSettings(recorded.table);
        // before the application starts: a @Startup bean or a first scheduled tick may call a @Locked method
        return new ServiceStartBuildItem("mysql-lock-durations");
    }

    private static <T> List<T> byKey(List<T> items, Function<T, String> key) {
        List<T> sorted = new ArrayList<>(items);
        sorted.sort(Comparator.comparing(key));
        return sorted;
    }
}
