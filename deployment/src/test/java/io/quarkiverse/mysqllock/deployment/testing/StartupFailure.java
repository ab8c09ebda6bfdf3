package io.quarkiverse.mysqllock.deployment.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.QuarkusUnitTest;

/** An application that must fail to build or start, with every expected fragment in its error messages. */
public final class StartupFailure {

    private StartupFailure() {
    }

    public static QuarkusUnitTest expect(QuarkusUnitTest app, String... expected) {
        return app.assertException(e -> {
            StringBuilder messages = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString()).contains(expected);
        });
    }
}
