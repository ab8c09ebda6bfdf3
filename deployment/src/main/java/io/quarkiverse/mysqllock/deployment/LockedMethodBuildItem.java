package io.quarkiverse.mysqllock.deployment;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.MethodInfo;

import io.quarkus.builder.item.MultiBuildItem;

/**
 * A method that a {@code @Locked} annotation applies to, as found in the index: its own annotation, or else its
 * class's. Not checked yet: a private or static method with its own annotation is one too, for validation to reject.
 */
final class LockedMethodBuildItem extends MultiBuildItem {

    private final String key;
    private final MethodInfo method;
    private final AnnotationInstance annotation;

    LockedMethodBuildItem(String key, MethodInfo method, AnnotationInstance annotation) {
        this.key = key;
        this.method = method;
        this.annotation = annotation;
    }

    /** The method's {@link io.quarkiverse.mysqllock.runtime.locked.LockedMethodKey}. */
    String key() {
        return key;
    }

    MethodInfo method() {
        return method;
    }

    /** The annotation in effect: the method's own, or its class's. */
    AnnotationInstance annotation() {
        return annotation;
    }
}
