import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, IconButton } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import type { Token } from "../../../api/tokens";
import { Icon } from "../../../components/icons";
import { DropdownMenu } from "../../../components/ui/dropdown-menu";
import { chatTargets, fillChatLink, isAppLink, isWebUrl, type ChatTarget } from "../../../lib/chat-links";
import { serverAddress, status, statusLoaded } from "../../../stores/status";
import { toast } from "../../../stores/toast";
import { fullKey } from "../../../stores/tokens";

/** ChatButton opens the first configured chat app with this token; the menu offers the others. */
export function ChatButton({ token }: { token: Token }) {
  useSignals();
  const { t } = useTranslation();
  // null: the chats option could not be read (the /chat page's rules apply).
  const parsed = chatTargets(status.value.chats);
  const targets = parsed ?? [];
  // The chat links the server has now: the copy kept from an earlier visit may name a site the key must no longer go to.
  const loaded = statusLoaded.value;
  const open = (target: ChatTarget | undefined) => {
    if (!statusLoaded.value) return;
    if (parsed === null) {
      toast.error(t("chatPage.parseFailed"));
      return;
    }
    if (!target) {
      toast.error(t("tokens.msg.chatMissing"));
      return;
    }
    const url = target.template.trim() ? fillChatLink(target.template, fullKey(token).slice(3), serverAddress.value) : "";
    // Only web addresses and chat applications' own schemes open: a
    // javascript: or data: template would run in the console's place.
    if (!isWebUrl(url) && !isAppLink(url)) {
      toast.error(t("tokens.msg.chatBroken"));
      return;
    }
    window.open(url, "_blank", "noopener,noreferrer");
  };
  return (
    <Flex gap="0" align="center">
      <Button size="1" variant="soft" color="cyan" disabled={!loaded} onClick={() => open(targets[0])} className={targets.length > 1 ? "split-left" : undefined} data-testid="chat-token">
        {t("tokens.row.chat")}
      </Button>
      {targets.length > 1 ? (
        <DropdownMenu.Root>
          <DropdownMenu.Trigger>
            <IconButton size="1" variant="soft" color="cyan" disabled={!loaded} aria-label={t("tokens.row.chatMore")} className="split-right">
              <Icon name="chevronRight" size={12} style={{ transform: "rotate(90deg)" }} />
            </IconButton>
          </DropdownMenu.Trigger>
          <DropdownMenu.Content>
            {targets.map((target) => (
              <DropdownMenu.Item key={`${target.index}:${target.name}`} onSelect={() => open(target)}>
                {target.name}
              </DropdownMenu.Item>
            ))}
          </DropdownMenu.Content>
        </DropdownMenu.Root>
      ) : null}
    </Flex>
  );
}
