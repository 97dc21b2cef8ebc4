import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module';
import { CardService } from './card.service';

@Module({ imports: [ConversationsModule], providers: [CardService], exports: [CardService] })
export class CardsModule {}
