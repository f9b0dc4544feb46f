// A stand-in for Spring's class of the same name (spring-web 6), with its superclass and its
// nested TooManyRequests (429) as in Spring, so that resilience4j's exception lists match it as
// they would Spring's own.
package org.springframework.web.client;

public class HttpClientErrorException extends HttpStatusCodeException {
    public HttpClientErrorException(String msg) {
        super(msg);
    }

    public static final class TooManyRequests extends HttpClientErrorException {
        public TooManyRequests(String msg) {
            super(msg);
        }
    }
}
