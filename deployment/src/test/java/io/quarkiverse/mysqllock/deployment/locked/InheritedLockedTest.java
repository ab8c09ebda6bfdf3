package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.BooleanSupplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.LockNames;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code @Locked} is {@code @Inherited}: a class-level annotation covers the methods its subclasses declare, as CDI
 * binds the interceptor to them, under the nearest annotated ancestor's annotation.
 */
class InheritedLockedTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Base.class, Child.class, Middle.class, Grandchild.class, Renamed.class);

    @Inject
    Child child;

    @Inject
    Grandchild grandchild;

    @Inject
    Renamed renamed;

    @Test
    void aSubclassMethodIsLockedUnderItsOwnClassAndMethod() {
        assertThat(child.own(() -> ServerState.holder(serverName(Child.class, "own")).isPresent())).isTrue();
        assertThat(ServerState.holder(serverName(Child.class, "own"))).isEmpty();
    }

    @Test
    void anInheritedMethodKeepsItsDeclaringClassesName() {
        assertThat(child.inherited(() -> ServerState.holder(serverName(Base.class, "inherited")).isPresent())).isTrue();
    }

    @Test
    void anOverridingMethodIsLockedUnderTheSubclass() {
        assertThat(child.overridden(() -> ServerState.holder(serverName(Child.class, "overridden")).isPresent()))
                .isTrue();
    }

    @Test
    void aGrandchildIsCoveredToo() {
        assertThat(grandchild.deeper(() -> ServerState.holder(serverName(Grandchild.class, "deeper")).isPresent()))
                .isTrue();
        assertThat(grandchild.middle(() -> ServerState.holder(serverName(Middle.class, "middle")).isPresent()))
                .isTrue();
    }

    @Test
    void theNearestAnnotatedAncestorWins() {
        assertThat(renamed.named(() -> ServerState.holder(LockNames.withNamespace(null).serverName("renamed"))
                .isPresent())).isTrue();
    }

    private static String serverName(Class<?> type, String method) {
        return LockNames.withNamespace(null).serverName(type.getName() + "#" + method);
    }

    @Locked
    public abstract static class Base {
        public boolean inherited(BooleanSupplier check) {
            return check.getAsBoolean();
        }

        public boolean overridden(BooleanSupplier check) {
            return false;
        }
    }

    @ApplicationScoped
    public static class Child extends Base {
        public boolean own(BooleanSupplier check) {
            return check.getAsBoolean();
        }

        @Override
        public boolean overridden(BooleanSupplier check) {
            return check.getAsBoolean();
        }
    }

    public abstract static class Middle extends Base {
        public boolean middle(BooleanSupplier check) {
            return check.getAsBoolean();
        }
    }

    @ApplicationScoped
    public static class Grandchild extends Middle {
        public boolean deeper(BooleanSupplier check) {
            return check.getAsBoolean();
        }
    }

    @ApplicationScoped
    @Locked("renamed")
    public static class Renamed extends Base {
        public boolean named(BooleanSupplier check) {
            return check.getAsBoolean();
        }
    }
}
