package io.quarkiverse.mysqllock.deployment;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.inject.Singleton;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.AnnotationValue;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;
import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.FenceRefusedException;
import io.quarkiverse.mysqllock.Fenced;
import io.quarkiverse.mysqllock.runtime.fence.IncomingFence;
import io.quarkiverse.mysqllock.runtime.locked.DataSourceManagers;
import io.quarkiverse.mysqllock.runtime.locked.FenceGuards;
import io.quarkiverse.mysqllock.runtime.locked.FencedInterceptor;
import io.quarkiverse.mysqllock.runtime.locked.FencedMethods;
import io.quarkiverse.mysqllock.runtime.locked.LockNameResolver;
import io.quarkiverse.mysqllock.runtime.locked.LockedOptions;
import io.quarkiverse.mysqllock.runtime.locked.LockedRecorder;
import io.quarkus.agroal.spi.JdbcDataSourceBuildItem;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.SyntheticBeanBuildItem;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.AdditionalIndexedClassesBuildItem;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.GeneratedClassBuildItem;
import io.quarkus.deployment.recording.RecorderContext;
import io.quarkus.resteasy.reactive.spi.ContainerRequestFilterBuildItem;
import io.quarkus.resteasy.reactive.spi.ExceptionMapperBuildItem;
import io.quarkus.runtime.RuntimeValue;

/**
 * {@code @Fenced} REST methods: their lock names checked and parsed as {@code @Locked}'s are, a resolver generated for
 * each templated one, the table recorded as a bean; the fence guard and its interceptor; with Quarkus REST, the filter
 * that reads the {@code Lock-Fence} header and the mapper that answers a refusal.
 */
class FencedProcessor {

    private static final Logger LOG = Logger.getLogger(FencedProcessor.class);
    static final DotName FENCED = DotName.createSimple(Fenced.class);
    static final DotName TRANSACTIONAL = DotName.createSimple("jakarta.transaction.Transactional");
    /** By name: they implement jakarta.ws.rs types, which an application without REST does not have. */
    static final String FILTER = "io.quarkiverse.mysqllock.runtime.rest.FenceHeaderFilter";
    static final String MAPPER = "io.quarkiverse.mysqllock.runtime.rest.FenceRefusedExceptionMapper";

    /** A checked {@code @Fenced} method: its key, and its written-out lock name or its resolver's class. */
    record FencedMethod(String key, String fixedName, String resolverClassName, List<LockNameTemplate.Segment> segments,
            List<LockNamePlaceholders.Placeholder> placeholders, String dataSource) {
    }

    @BuildStep
    AdditionalBeanBuildItem beans() {
        return AdditionalBeanBuildItem.builder().addBeanClasses(FencedInterceptor.class, FenceGuards.class,
                IncomingFence.class, DataSourceManagers.class).setUnremovable().build();
    }

    /** The methods' table, as a {@code @Singleton} bean; an invalid {@code @Fenced} fails the build, saying why. */
    @BuildStep
    @Record(ExecutionTime.STATIC_INIT)
    SyntheticBeanBuildItem recordTable(CombinedIndexBuildItem combinedIndex, LockedRecorder recorder,
            RecorderContext recorderContext, LockDataSourceBuildItem lockDataSource,
            List<JdbcDataSourceBuildItem> dataSources, BuildProducer<GeneratedClassBuildItem> generatedClasses) {
        boolean inMemory = lockDataSource.inMemory();
        List<FencedMethod> methods = check(combinedIndex.getIndex(),
                LockDataSourceBuildItem.managed(lockDataSource.name(), dataSources, false));
        RuntimeValue<Map<String, FencedMethods.FencedMethod>> table = recorder.newFencedTable();
        for (FencedMethod method : methods) {
            RuntimeValue<LockNameResolver> resolver = null;
            if (method.resolverClassName() != null) {
                LockNameResolverGenerator.generate(generatedClasses, method.resolverClassName(), method.segments(),
                        method.placeholders());
                resolver = recorderContext.newInstance(method.resolverClassName());
            }
            String dataSource = method.dataSource();
            recorder.addFenced(table, method.key(), method.fixedName(), resolver,
                    inMemory || dataSource.isEmpty() || dataSource.equals(lockDataSource.name()) ? null : dataSource);
        }
        return SyntheticBeanBuildItem.configure(FencedMethods.class).scope(Singleton.class).unremovable()
                .runtimeValue(recorder.fencedMethods(table)).done();
    }

    @BuildStep
    void rest(CombinedIndexBuildItem combinedIndex, Capabilities capabilities,
            BuildProducer<ContainerRequestFilterBuildItem> filters, BuildProducer<ExceptionMapperBuildItem> mappers) {
        boolean used = !combinedIndex.getIndex().getAnnotations(FENCED).isEmpty();
        if (!capabilities.isPresent(Capability.REST)) {
            if (used) {
                LOG.warn("@Fenced methods take their token from the Lock-Fence header of a Quarkus REST request, and this"
                        + " application has no Quarkus REST (quarkus-rest): every call of one is refused. Admit tokens"
                        + " with FenceGuard instead");
            }
            return;
        }
        // the mapper also answers FenceGuard's refusals in the application's own resources
        mappers.produce(new ExceptionMapperBuildItem(MAPPER, FenceRefusedException.class.getName(), RestProcessor.PRIORITY,
                true));
        if (used) {
            filters.produce(new ContainerRequestFilterBuildItem(FILTER));
        }
    }

    /** By name, as the others: a REST Client provider that applications register on their client interfaces. */
    static final String CLIENT_FILTER = "io.quarkiverse.mysqllock.runtime.rest.LockFenceClientFilter";

    /** Indexed where a REST Client is, so that {@code @RegisterProvider(LockFenceClientFilter.class)} finds it. */
    @BuildStep
    void restClient(Capabilities capabilities, BuildProducer<AdditionalIndexedClassesBuildItem> indexed) {
        if (capabilities.isPresent(Capability.REST_CLIENT) || capabilities.isPresent(Capability.REST_CLIENT_REACTIVE)) {
            indexed.produce(new AdditionalIndexedClassesBuildItem(CLIENT_FILTER));
        }
    }

    /** The {@code @Fenced} methods in key order (reproducible bytecode), or a {@link DeploymentException}. */
    static List<FencedMethod> check(IndexView index, Set<String> managed) {
        List<String> errors = new ArrayList<>();
        List<FencedMethod> methods = new ArrayList<>();
        for (AnnotationInstance annotation : index.getAnnotations(FENCED)) {
            if (annotation.target().kind() == AnnotationTarget.Kind.CLASS) {
                if (!annotation.target().asClass().name().toString().startsWith("io.quarkiverse.mysqllock.")) {
                    errors.add("@Fenced on class " + annotation.target().asClass().name() + ": put it on each method,"
                            + " with the lock that method's callers hold");
                }
                continue;
            }
            if (annotation.target().kind() != AnnotationTarget.Kind.METHOD) {
                continue;
            }
            MethodInfo method = annotation.target().asMethod();
            FencedMethod checked = check(index, method, annotation.value().asString(), errors);
            if (checked == null) {
                continue;
            }
            AnnotationValue dataSource = annotation.value("datasource");
            String name = dataSource == null ? "" : dataSource.asString();
            if (!name.isEmpty() && !managed.contains(name)) {
                errors.add("@Fenced method " + method.declaringClass().name() + "#" + method.name() + "(): datasource = \""
                        + name + "\" is not a MySQL or MariaDB datasource of the application (they are: "
                        + String.join(", ", managed) + "). Name one of them, or leave datasource out for the lock"
                        + " datasource");
                continue;
            }
            methods.add(new FencedMethod(checked.key(), checked.fixedName(), checked.resolverClassName(),
                    checked.segments(), checked.placeholders(), name));
        }
        if (!errors.isEmpty()) {
            throw new DeploymentException("Invalid @Fenced usage:\n- " + String.join("\n- ", errors));
        }
        methods.sort(Comparator.comparing(FencedMethod::key));
        return methods;
    }

    private static FencedMethod check(IndexView index, MethodInfo method, String template, List<String> errors) {
        String description = "@Fenced method " + method.declaringClass().name() + "#" + method.name() + "()";
        if (Modifier.isInterface(method.declaringClass().flags()) || Modifier.isAbstract(method.flags())) {
            errors.add(description + " is abstract: an interceptor binding on it does not reach the method that"
                    + " implements it, which would run unfenced. Put @Fenced on the implementing method");
            return null;
        }
        if (Modifier.isPrivate(method.flags()) || Modifier.isStatic(method.flags())) {
            errors.add(description + " is " + (Modifier.isPrivate(method.flags()) ? "private" : "static")
                    + ": interceptors do not apply to it. Make it a non-private instance method of a bean");
            return null;
        }
        if (template.isBlank()) {
            errors.add(description + " names no lock: write the lock whose tokens it accepts, as its callers name it"
                    + " (@Fenced(\"order:{id}\"))");
            return null;
        }
        if (LockedOptions.isExpression(template)) {
            errors.add(description + ": lock name template \"" + template + "\" holds a config expression. Write the"
                    + " name, or build it from parameters ({param}): it must be the lock the callers hold");
            return null;
        }
        LockNamePlaceholders.Resolved name = LockNamePlaceholders.parseAndResolve(index, method, template, template,
                description, errors);
        if (name == null) {
            return null;
        }
        if (!method.hasAnnotation(TRANSACTIONAL) && !method.declaringClass().hasDeclaredAnnotation(TRANSACTIONAL)) {
            LOG.warnf("%s is not @Transactional: its fence is checked as the request comes in, and a stale request that"
                    + " passed a moment before a newer one may still write after it. Make it @Transactional, with its"
                    + " writes in the database of the lock table that keeps the tokens", description);
        }
        String key = LockedMethodScanner.key(method);
        return new FencedMethod(key, name.templated() ? null : name.fixedName(),
                name.templated() ? LockNameResolverGenerator.className("fenced:" + key) : null, name.segments(),
                name.placeholders(), "");
    }
}
