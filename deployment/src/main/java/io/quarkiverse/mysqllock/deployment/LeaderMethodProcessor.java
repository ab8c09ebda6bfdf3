package io.quarkiverse.mysqllock.deployment;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.inject.Singleton;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.DotName;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.PrimitiveType;
import org.jboss.jandex.Type;

import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.WhileLeader;
import io.quarkiverse.mysqllock.runtime.LockNames;
import io.quarkiverse.mysqllock.runtime.locked.LeaderMethod;
import io.quarkiverse.mysqllock.runtime.locked.LeaderMethodRunner;
import io.quarkiverse.mysqllock.runtime.locked.LeaderMethods;
import io.quarkiverse.mysqllock.runtime.locked.LockedRecorder;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.SyntheticBeanBuildItem;
import io.quarkus.arc.deployment.UnremovableBeanBuildItem;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.nativeimage.ReflectiveMethodBuildItem;

/**
 * The build steps of {@code @WhileLeader}: find the methods, check them all (failing the build once, with every
 * misuse), keep their beans, register the methods for reflection (native images), and record them for the
 * {@link LeaderMethodRunner}, which is added only when there are such methods.
 */
class LeaderMethodProcessor {

    private static final DotName WHILE_LEADER = DotName.createSimple(WhileLeader.class);
    private static final DotName GRANTED = DotName.createSimple(LeadershipGranted.class);

    @BuildStep
    @Record(ExecutionTime.STATIC_INIT)
    void leaderMethods(CombinedIndexBuildItem index, LockedRecorder recorder,
            BuildProducer<AdditionalBeanBuildItem> beans, BuildProducer<SyntheticBeanBuildItem> synthetic,
            BuildProducer<UnremovableBeanBuildItem> unremovable, BuildProducer<ReflectiveMethodBuildItem> reflective) {
        List<AnnotationInstance> annotations = new ArrayList<>(index.getIndex().getAnnotations(WHILE_LEADER));
        if (annotations.isEmpty()) {
            return;
        }
        annotations.sort(Comparator.comparing(a -> a.target().asMethod().declaringClass().name() + "#"
                + a.target().asMethod().name()));
        List<String> errors = new ArrayList<>();
        List<String> roles = new ArrayList<>();
        List<String> classes = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<LeaderMethod.Parameter> parameters = new ArrayList<>();
        for (AnnotationInstance annotation : annotations) {
            if (annotation.target().kind() != AnnotationTarget.Kind.METHOD) {
                continue;
            }
            MethodInfo method = annotation.target().asMethod();
            String description = "@WhileLeader method " + method.declaringClass().name() + "#" + method.name() + "()";
            int before = errors.size();
            String role = annotation.value() == null ? "" : annotation.value().asString();
            try {
                LockNames.requireValid(role);
            } catch (IllegalArgumentException e) {
                errors.add(description + ": role \"" + role + "\" is not a valid lock name: " + e.getMessage());
            }
            if (Modifier.isPrivate(method.flags()) || Modifier.isStatic(method.flags())) {
                errors.add(description + " is " + (Modifier.isPrivate(method.flags()) ? "private" : "static")
                        + ": make it a non-private instance method of a bean");
            }
            if (method.returnType().kind() != Type.Kind.VOID) {
                errors.add(description + " returns " + method.returnType() + ": it runs on a thread of its own, and"
                        + " nobody receives a result. Return void");
            }
            LeaderMethod.Parameter parameter = parameter(method);
            if (parameter == null) {
                errors.add(description + " takes " + method.parameterTypes() + ": take nothing, the term (long), or"
                        + " the LeadershipGranted event");
            }
            if (errors.size() > before) {
                continue;
            }
            roles.add(role);
            classes.add(method.declaringClass().name().toString());
            names.add(method.name());
            parameters.add(parameter);
            unremovable.produce(UnremovableBeanBuildItem.beanTypes(method.declaringClass().name()));
            reflective.produce(new ReflectiveMethodBuildItem("@WhileLeader", method));
        }
        if (!errors.isEmpty()) {
            throw new DeploymentException("Invalid @WhileLeader usage:\n- " + String.join("\n- ", errors));
        }
        beans.produce(AdditionalBeanBuildItem.unremovableOf(LeaderMethodRunner.class));
        synthetic.produce(SyntheticBeanBuildItem.configure(LeaderMethods.class).scope(Singleton.class).unremovable()
                .runtimeValue(recorder.leaderMethods(roles, classes, names, parameters)).done());
    }

    /** What the method takes, or null if it takes something else. */
    private static LeaderMethod.Parameter parameter(MethodInfo method) {
        if (method.parametersCount() == 0) {
            return LeaderMethod.Parameter.NONE;
        }
        if (method.parametersCount() > 1) {
            return null;
        }
        Type type = method.parameterType(0);
        if (type.kind() == Type.Kind.PRIMITIVE && type.asPrimitiveType().primitive() == PrimitiveType.Primitive.LONG) {
            return LeaderMethod.Parameter.TERM;
        }
        return type.name().equals(GRANTED) ? LeaderMethod.Parameter.GRANT : null;
    }
}
