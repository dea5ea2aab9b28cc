import { Flex, Spinner } from "@radix-ui/themes";
import { lazy, Suspense, type ComponentType } from "react";

/**
 * lazyPage loads a page's code on first visit, so pages with heavy
 * dependencies (charts, the Markdown renderer) stay out of the main bundle.
 */
export function lazyPage(load: () => Promise<{ default: ComponentType }>): ComponentType {
  const Page = lazy(load);
  return function LazyPage() {
    return (
      <Suspense
        fallback={
          <Flex justify="center" py="6">
            <Spinner size="3" />
          </Flex>
        }
      >
        <Page />
      </Suspense>
    );
  };
}
